"""The HTTP contract is committed and current: schemas/openapi.json is what the API serves."""

from __future__ import annotations

import json

from engram.api import render_openapi
from engram.cli import OPENAPI_PATH


def test_the_committed_openapi_document_is_the_one_the_api_serves() -> None:
    assert OPENAPI_PATH.read_text(encoding="utf-8") == render_openapi(), (
        "run `engram schemas export`"
    )


def test_every_v1_route_requires_a_bearer_token_and_documents_401() -> None:
    document = json.loads(render_openapi())
    for path, methods in document["paths"].items():
        if not path.startswith("/v1/"):
            continue
        for method, operation in methods.items():
            assert operation["security"] == [{"HTTPBearer": []}], (method, path)
            assert "401" in operation["responses"], (method, path)
