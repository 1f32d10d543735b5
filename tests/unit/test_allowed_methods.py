"""A method a path does not serve is 405 with ``Allow`` naming exactly what the path serves —
every method of every route on it, as the OpenAPI document lists them. No request here gets
past routing, so no service is needed."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from engram.api import create_api
from engram.infra.settings import ApiSettings, Settings

SAMPLE = "6f0e6f0e-6f0e-4f0e-8f0e-6f0e6f0e6f0e"  # fits every path parameter: ids and names


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_api(Settings(api=ApiSettings(dev_mode=True))))


def _documented(client: TestClient) -> dict[str, list[str]]:
    paths = client.app.openapi()["paths"]  # type: ignore[attr-defined]
    return {path: sorted(m.upper() for m in methods) for path, methods in paths.items()}


def test_options_and_any_unserved_method_list_every_method_of_the_path(
    client: TestClient,
) -> None:
    documented = _documented(client)
    assert documented["/v1/beliefs/{belief_id}"] == ["DELETE", "GET"], "two routes, one path"
    two_routes_first = sorted(documented.items(), key=lambda item: len(item[1]) == 1)
    for template, methods in two_routes_first:
        path = re.sub(r"\{[^}]+\}", SAMPLE, template)
        for refused in ("OPTIONS", "PUT", "PATCH"):
            answer = client.request(refused, path)
            assert answer.status_code == 405, (refused, template)
            allow = sorted(m.strip() for m in answer.headers["Allow"].split(","))
            assert allow == methods, (refused, template, answer.headers["Allow"])
            assert answer.json()["detail"].startswith(f"{refused} is not served here"), template


def test_a_path_nothing_serves_is_404_not_405(client: TestClient) -> None:
    assert client.options("/v1/nothing").status_code == 404
