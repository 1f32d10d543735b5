"""The OpenAPI document, told the truth about 422.

FastAPI documents every 422 as its field-error list (``HTTPValidationError``), but a 422 that
the API raises itself — a correction that cannot apply, an operator token that names no
principal, an episode that cannot be encoded — carries one sentence (``Problem``). The document
says a 422 is either, so a client (and schemathesis) can rely on it.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

EITHER = {
    "anyOf": [
        {"$ref": "#/components/schemas/HTTPValidationError"},
        {"$ref": "#/components/schemas/Problem"},
    ]
}


def honest_openapi(app: FastAPI) -> dict[str, Any]:
    if app.openapi_schema is None:
        document = get_openapi(title=app.title, version=app.version, routes=app.routes)
        for methods in document.get("paths", {}).values():
            for operation in methods.values():
                invalid = operation.get("responses", {}).get("422")
                if invalid is not None:
                    invalid["content"] = {"application/json": {"schema": EITHER}}
        app.openapi_schema = document
    return app.openapi_schema


def install(app: FastAPI) -> None:
    app.openapi = lambda: honest_openapi(app)  # type: ignore[method-assign]
