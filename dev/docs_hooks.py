"""MkDocs hooks (mkdocs.yml): what keeps the site from going stale beyond MkDocs' own link checks.

- Every backticked repository path in a page (`` `streams/transport.py` ``, `` `tests/unit/x.py::test` ``)
  and in the README must exist in the checkout: a warning each, and ``mkdocs build --strict``
  (``make docs``, ``make lint``) fails on warnings. Generated places (``.dev/``, ``site/``) and
  paths with placeholders (``<name>``, ``NNNN``, ``*``) are not checked.
- The HTTP reference (docs/reference/http.md) is rendered from ``schemas/openapi.json`` at build
  time, where the page says ``<!-- openapi -->``: the document ``engram schemas export`` writes and
  ``make lint`` checks, not a copy of it.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OPENAPI = ROOT / "schemas" / "openapi.json"
MARKER = "<!-- openapi -->"

log = logging.getLogger("mkdocs.plugins.engram")

# The tops a repository path in the docs starts with, and the files at the root.
TOPS = (
    "engram/", "streams/", "schemas/", "ingest/", "projections/", "prompts/", "migrations/",
    "evaluation/", "tests/", "bench/", "dev/", "docs/", "examples/", "requirements/", ".ci/",
)  # fmt: skip
ROOT_FILES = frozenset(
    {"Makefile", "pyproject.toml", "README.md", "compose.yaml", "Dockerfile", "mkdocs.yml"}
)
CODE_SPAN = re.compile(r"(?<!`)`([^`\s]+)`(?!`)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)


def repository_paths(markdown: str) -> list[str]:
    """The backticked spans of ``markdown`` (outside fenced blocks) that name a repository path,
    as a path: a test's ``::name`` and a ``:line`` dropped, placeholders and globs left out."""
    found = []
    for span in CODE_SPAN.findall(FENCE.sub("", markdown)):
        path = span.split("::")[0]
        path = re.sub(r":\d+(-\d+)?$", "", path)
        if any(mark in path for mark in "<>*{}$") or "NNNN" in path:  # placeholders, globs
            continue
        if path in ROOT_FILES or path.startswith(TOPS):
            found.append(path)
    return found


def missing_paths(markdown: str, root: Path = ROOT) -> list[str]:
    """The repository paths ``markdown`` names that do not exist under ``root``."""
    return sorted({p for p in repository_paths(markdown) if not (root / p).exists()})


def _schema_name(schema: dict[str, Any]) -> str:
    """A schema as a reader names it: its component, an array of one, or its type."""
    if "$ref" in schema:
        return "`" + str(schema["$ref"]).rsplit("/", 1)[-1] + "`"
    if schema.get("type") == "array" and isinstance(schema.get("items"), dict):
        return "array of " + _schema_name(schema["items"])
    if "anyOf" in schema:
        return " or ".join(_schema_name(s) for s in schema["anyOf"])
    return str(schema.get("type", "object"))


def _cell(text: object) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _operation(method: str, path: str, op: dict[str, Any]) -> list[str]:
    lines = [f"### `{method.upper()} {path}`", ""]
    if op.get("summary"):
        lines += [f"**{_cell(op['summary'])}**", ""]
    if op.get("description"):
        lines += [str(op["description"]).strip(), ""]
    params = op.get("parameters", [])
    if params:
        lines += ["| parameter | in | type | required | description |", "|---|---|---|---|---|"]
        for p in params:
            kind = _schema_name(p.get("schema", {}))
            lines.append(
                f"| `{p['name']}` | {p['in']} | {kind} | {'yes' if p.get('required') else 'no'} "
                f"| {_cell(p.get('description', ''))} |"
            )
        lines.append("")
    body = op.get("requestBody", {}).get("content", {})
    for media, content in body.items():
        lines += [f"Request body ({media}): {_schema_name(content.get('schema', {}))}", ""]
    lines += ["| status | description | body |", "|---|---|---|"]
    for status, response in op.get("responses", {}).items():
        content = response.get("content", {})
        shapes = ", ".join(_schema_name(c.get("schema", {})) for c in content.values())
        lines.append(f"| {status} | {_cell(response.get('description', ''))} | {shapes} |")
    return [*lines, ""]


def _component(name: str, schema: dict[str, Any]) -> list[str]:
    lines = [f"### `{name}`", ""]
    if schema.get("description"):
        lines += [str(schema["description"]).strip(), ""]
    props = schema.get("properties", {})
    if props:
        required = set(schema.get("required", []))
        lines += ["| field | type | required | description |", "|---|---|---|---|"]
        for field, spec in props.items():
            lines.append(
                f"| `{field}` | {_schema_name(spec)} | {'yes' if field in required else 'no'} "
                f"| {_cell(spec.get('description', ''))} |"
            )
    elif "enum" in schema:
        lines.append("One of: " + ", ".join(f"`{v}`" for v in schema["enum"]))
    return [*lines, ""]


def render_openapi(document: dict[str, Any]) -> str:
    """The operations and component schemas of an OpenAPI document as Markdown."""
    info = document.get("info", {})
    lines = [
        f"OpenAPI {document.get('openapi', '')}, {info.get('title', '')} {info.get('version', '')}",
        "",
    ]
    lines += ["## Operations", ""]
    for path, methods in document.get("paths", {}).items():
        for method, op in methods.items():
            lines += _operation(method, path, op)
    lines += ["## Schemas", ""]
    for name, schema in document.get("components", {}).get("schemas", {}).items():
        lines += _component(name, schema)
    return "\n".join(lines)


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    """Check the page's repository paths; render the OpenAPI document where the page asks."""
    for path in missing_paths(markdown):
        log.warning(
            "%s names `%s`, which does not exist in the repository", page.file.src_path, path
        )
    if MARKER in markdown:
        markdown = markdown.replace(MARKER, render_openapi(json.loads(OPENAPI.read_text())))
    return markdown


def on_post_build(**_: Any) -> None:
    """The README is the repository's front page, not a page of the site: its paths too."""
    for path in missing_paths((ROOT / "README.md").read_text()):
        log.warning("README.md names `%s`, which does not exist in the repository", path)
