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


def _objects(
    schema: object, components: dict[str, object], seen: set[str]
) -> list[dict[str, object]]:
    """Every object schema ``schema`` reaches, following ``$ref`` once each."""
    if isinstance(schema, list):
        return [o for item in schema for o in _objects(item, components, seen)]
    if not isinstance(schema, dict):
        return []
    ref = schema.get("$ref")
    if isinstance(ref, str):
        name = ref.rsplit("/", 1)[-1]
        if name in seen:
            return []
        seen.add(name)
        return _objects(components[name], components, seen)
    found = [schema] if schema.get("type") == "object" and "properties" in schema else []
    return found + [o for value in schema.values() for o in _objects(value, components, seen)]


def test_every_request_body_refuses_fields_it_does_not_have() -> None:
    document = json.loads(render_openapi())
    components = document["components"]["schemas"]
    bodies = 0
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            content = operation.get("requestBody", {}).get("content", {})
            for media in content.values():
                for schema in _objects(media["schema"], components, set()):
                    bodies += 1
                    assert schema.get("additionalProperties") is False, (method, path, schema)
    assert bodies >= 6  # turns (batch, turn, remember, message), remember, correction, webhook
