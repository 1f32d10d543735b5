"""The docs site's own checks (dev/docs_hooks.py, run by ``mkdocs build --strict``): a backticked
repository path that does not exist is caught, and the HTTP reference is read from the OpenAPI
document the application exports."""

from __future__ import annotations

import json
from pathlib import Path

from dev.docs_hooks import OPENAPI, missing_paths, render_openapi, repository_paths

PAGE = """
See `streams/transport.py`, `tests/unit/test_docs_hooks.py::test_x`, `engram/api.py:12`,
`migrations/NNNN_name.sql`, `engram/web/<router>.py`, `engram.streams.pipeline`, `make lint`,
`pyproject.toml` and `engram/policies/source.py`.

```sh
cat engram/not/checked.py
```
"""


def test_the_backticked_repository_paths_are_read_and_placeholders_left_out() -> None:
    assert repository_paths(PAGE) == [
        "streams/transport.py",
        "tests/unit/test_docs_hooks.py",
        "engram/api.py",
        "pyproject.toml",
        "engram/policies/source.py",
    ]


def test_a_path_that_does_not_exist_is_named() -> None:
    assert missing_paths(PAGE) == ["engram/policies/source.py"]


def test_the_http_reference_holds_every_operation_and_schema_of_the_exported_document() -> None:
    document = json.loads(Path(OPENAPI).read_text())
    page = render_openapi(document)
    for path, methods in document["paths"].items():
        for method in methods:
            assert f"### `{method.upper()} {path}`" in page
    for name in document["components"]["schemas"]:
        assert f"### `{name}`" in page
