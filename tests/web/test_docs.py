"""The contract is served by the running app, with a Swagger UI over it."""

from __future__ import annotations

import dataclasses
import importlib

import yaml
from openapi_spec_validator import validate
from openapi_spec_validator.readers import read_from_filename

from kindling.web.app import create_app
from tests.helpers.contract import ROOT

SPEC = ROOT / "openapi.yaml"
METHODS = {"get", "put", "post", "delete", "patch", "head", "options"}


def operations(spec: dict):
    for path, item in spec["paths"].items():
        for method, operation in ((m, o) for m, o in item.items() if m in METHODS):
            yield path, method, operation


def test_spec_is_served_as_written(client):
    written = yaml.safe_load(SPEC.read_text())
    response = client.get("/api/openapi.json")
    assert response.status_code == 200
    assert response.json() == written
    response = client.get("/api/openapi.yaml")
    assert response.status_code == 200 and response.headers["content-type"] == "application/yaml"
    assert yaml.safe_load(response.text) == written


def test_swagger_ui_gets_a_server_url_it_can_use(client, app):
    # Swagger UI lists the servers and sends "Try it out" requests to the one chosen: `""`
    # would show a blank entry.
    [server] = client.get("/api/openapi.json").json()["servers"]
    assert server["url"] == "/" and server["description"]
    # Behind a proxy that mounts the app under a prefix, the prefix leads the URL.
    with app.test_client(root_path="/kindling") as proxied:
        assert proxied.get("/api/openapi.json").json()["servers"][0]["url"] == "/kindling/"


def test_swagger_ui(client):
    response = client.get("/api/ui/")
    assert response.status_code == 200
    assert "swagger-ui" in response.text and "/api/openapi.json" in response.text


def test_without_api_docs_neither_the_ui_nor_the_spec_is_served(settings):
    app = create_app(dataclasses.replace(settings, api_docs=False))
    with app.test_client() as client:
        for path in ("/api/openapi.json", "/api/ui/"):
            response = client.get(path)
            assert response.status_code == 404, path
            assert response.json()["code"] == "not_found"
        assert client.get("/api/health").status_code == 200


def test_every_operation_has_an_explicit_handler():
    spec = yaml.safe_load(SPEC.read_text())
    for path, method, operation in operations(spec):
        module = importlib.import_module(operation["x-openapi-router-controller"])
        # In the views module of the feature that holds its rules, never in the web package.
        assert module.__name__.endswith(".views") and not module.__name__.startswith("kindling.web."), (method, path)
        assert callable(getattr(module, operation["operationId"])), (method, path)
        assert "default" in operation["responses"], (method, path)


def test_spec_passes_the_openapi_validator():
    spec, base_uri = read_from_filename(str(SPEC))
    validate(spec, base_uri=base_uri)


def resolved(spec: dict, parameter: dict) -> dict:
    """A parameter, or the shared one its `$ref` names."""
    if "$ref" in parameter:
        return spec["components"]["parameters"][parameter["$ref"].rsplit("/", 1)[1]]
    return parameter


def linked(spec: dict, link: dict) -> dict:
    """A link, or the shared one its `$ref` names."""
    if "$ref" in link:
        return spec["components"]["links"][link["$ref"].rsplit("/", 1)[1]]
    return link


def test_links_name_operations_and_their_parameters():
    spec = yaml.safe_load(SPEC.read_text())
    by_id = {operation["operationId"]: (path, operation) for path, _, operation in operations(spec)}
    links = [
        (operation["operationId"], name, linked(spec, link))
        for _, _, operation in operations(spec)
        for response in operation["responses"].values()
        for name, link in response.get("links", {}).items()
    ]
    assert links
    for source, name, link in links:
        path, target = by_id[link["operationId"]]
        declared = {
            resolved(spec, p)["name"] for p in spec["paths"][path].get("parameters", []) + target.get("parameters", [])
        }
        assert set(link.get("parameters", {})) <= declared, (source, name)
        if "requestBody" in link:
            body = target["requestBody"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
            assert set(link["requestBody"]) <= set(spec["components"]["schemas"][body]["properties"]), (source, name)
