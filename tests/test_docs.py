"""The contract is served by the running app, with a Swagger UI over it."""

from __future__ import annotations

import pathlib

import yaml


def test_spec_is_served_as_written(client):
    response = client.get("/api/openapi.json")
    assert response.status_code == 200
    served = response.json()
    written = yaml.safe_load((pathlib.Path(__file__).parent.parent / "openapi.yaml").read_text())
    assert served["paths"].keys() == written["paths"].keys()


def test_swagger_ui(client):
    response = client.get("/api/ui/")
    assert response.status_code == 200
    assert "swagger-ui" in response.text and "/api/openapi.json" in response.text


def test_every_operation_has_an_explicit_handler():
    spec = yaml.safe_load((pathlib.Path(__file__).parent.parent / "openapi.yaml").read_text())
    methods = {"get", "put", "post", "delete", "patch", "head", "options"}
    for path, item in spec["paths"].items():
        for method, operation in ((m, o) for m, o in item.items() if m in methods):
            assert operation["operationId"].startswith("kindling.handlers."), (method, path)
            assert "default" in operation["responses"], (method, path)
