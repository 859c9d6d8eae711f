"""Every parameter and body that openapi.yaml declares reaches its handler, under the name Connexion passes.

Connexion passes a path or query parameter by its name made pythonic (`programId` becomes
`program_id`, `id` becomes `id_`; the app is built with `pythonic_params=True`), a request body as
`body` (or its `x-body-name`), and a multipart file by its field's name, and only when the handler's
signature takes that name: a query parameter the handler names otherwise is dropped without a word.
Headers are not passed: a handler that declares one reads it from the request itself. A parameter
marked `x-ignored: true` is accepted only so that strict validation does not refuse it, and
`Idempotency-Key` is read by the request pipeline for every operation that declares it.
"""

from __future__ import annotations

import importlib
import inspect

import pytest
from connexion.decorators.parameter import pythonic

from kindling.web.app import load_spec
from kindling.web.operations import HTTP_METHODS

# Headers the request pipeline reads for the operations that declare them (kindling/web/idempotency.py).
PIPELINE_HEADERS = {"Idempotency-Key"}
# What Connexion's security step adds to a handler's arguments when the signature takes it.
CONTEXT = {"token_info", "user"}
SPEC = load_spec()


def _resolve(item: dict) -> dict:
    while "$ref" in item:
        kind, name = item["$ref"].split("/")[-2:]
        item = SPEC["components"][kind][name]
    return item


def _operations() -> list[tuple[str, dict, list[dict]]]:
    found = []
    for path, path_item in SPEC["paths"].items():
        shared = [_resolve(parameter) for parameter in path_item.get("parameters", [])]
        for method, operation in path_item.items():
            if method not in HTTP_METHODS:
                continue
            own = [_resolve(parameter) for parameter in operation.get("parameters", [])]
            overridden = {(p["name"], p["in"]) for p in own}
            parameters = own + [p for p in shared if (p["name"], p["in"]) not in overridden]
            body = _resolve(operation["requestBody"]) if "requestBody" in operation else None
            found.append((f"{method.upper()} {path}", {**operation, "requestBody": body}, parameters))
    return found


def _passed(spec_body: dict | None, parameters: list[dict]) -> tuple[set[str], list[str]]:
    """The argument names Connexion passes, and the headers the handler must read itself."""
    read = [p for p in parameters if not p.get("x-ignored")]
    names = {pythonic(p["name"]) for p in read if p["in"] in ("path", "query")}
    headers = [p["name"] for p in read if p["in"] in ("header", "cookie") and p["name"] not in PIPELINE_HEADERS]
    if spec_body is not None:
        for media_type, content in spec_body.get("content", {}).items():
            properties = _resolve(content.get("schema", {})).get("properties", {})
            files = {name for name, schema in properties.items() if schema.get("format") == "binary"}
            # A multipart body's files come by their names; its other fields, if any, as the body.
            names |= files if media_type.startswith("multipart/") else set()
            if not media_type.startswith("multipart/") or set(properties) - files:
                names.add(pythonic(spec_body.get("x-body-name", "body")))
    return names, headers


OPERATIONS = _operations()


@pytest.mark.parametrize(("name", "operation", "parameters"), OPERATIONS, ids=[name for name, _, _ in OPERATIONS])
def test_every_parameter_and_body_reaches_its_handler(name, operation, parameters):
    handler = inspect.unwrap(
        getattr(importlib.import_module(operation["x-openapi-router-controller"]), operation["operationId"])
    )
    signature = inspect.signature(handler).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in signature.values()):
        pytest.fail(f"{name}: {handler.__qualname__} takes **kwargs, so nothing here can tell what it reads")
    passed, headers = _passed(operation["requestBody"], parameters)
    source = inspect.getsource(handler)
    # A signed webhook reads the exact bytes sent, and its headers, from the request itself.
    raw_body = pythonic((operation["requestBody"] or {}).get("x-body-name", "body"))
    reads_raw = "flask.request.get_data()" in source
    missing = sorted(n for n in passed if n not in signature and not (n == raw_body and reads_raw))
    assert not missing, f"{name}: {handler.__qualname__} does not take {missing}, so Connexion drops them"
    # The reverse: an argument Connexion never passes (a camelCase name, say) keeps its default forever.
    never = sorted(n for n in signature if n not in passed | CONTEXT)
    assert not never, f"{name}: {handler.__qualname__} takes {never}, which Connexion never passes"
    unread = [h for h in headers if f'"{h}"' not in source and "dict(flask.request.headers)" not in source]
    assert not unread, f"{name}: {handler.__qualname__} does not read the headers {unread}"
