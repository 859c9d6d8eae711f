"""The contract is served by the running app, with a Swagger UI over it."""

from __future__ import annotations

import importlib
import pathlib

import yaml
from openapi_spec_validator import validate
from openapi_spec_validator.readers import read_from_filename

SPEC = pathlib.Path(__file__).parent.parent / "openapi.yaml"
METHODS = {"get", "put", "post", "delete", "patch", "head", "options"}


def operations(spec: dict):
    for path, item in spec["paths"].items():
        for method, operation in ((m, o) for m, o in item.items() if m in METHODS):
            yield path, method, operation


def test_spec_is_served_as_written(client):
    response = client.get("/api/openapi.json")
    assert response.status_code == 200
    served = response.json()
    written = yaml.safe_load(SPEC.read_text())
    assert served["paths"].keys() == written["paths"].keys()


def test_swagger_ui(client):
    response = client.get("/api/ui/")
    assert response.status_code == 200
    assert "swagger-ui" in response.text and "/api/openapi.json" in response.text


def test_every_operation_has_an_explicit_handler():
    spec = yaml.safe_load(SPEC.read_text())
    for path, method, operation in operations(spec):
        module = importlib.import_module(operation["x-openapi-router-controller"])
        assert module.__name__.startswith("kindling.handlers."), (method, path)
        assert callable(getattr(module, operation["operationId"])), (method, path)
        assert "default" in operation["responses"], (method, path)


def test_spec_passes_the_openapi_validator():
    spec, base_uri = read_from_filename(str(SPEC))
    validate(spec, base_uri=base_uri)


def test_links_name_operations_and_their_parameters():
    spec = yaml.safe_load(SPEC.read_text())
    by_id = {operation["operationId"]: (path, operation) for path, _, operation in operations(spec)}
    links = [
        (operation["operationId"], name, link)
        for _, _, operation in operations(spec)
        for response in operation["responses"].values()
        for name, link in response.get("links", {}).items()
    ]
    assert links
    for source, name, link in links:
        path, target = by_id[link["operationId"]]
        declared = {p["name"] for p in spec["paths"][path].get("parameters", []) + target.get("parameters", [])}
        assert set(link.get("parameters", {})) <= declared, (source, name)
        if "requestBody" in link:
            body = target["requestBody"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
            assert set(link["requestBody"]) <= set(spec["components"]["schemas"][body]["properties"]), (source, name)
