"""The operations openapi.yaml declares, and the ids their requests carry."""

from __future__ import annotations

import functools
import re

import yaml

from kindling.web.app import SPEC

METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")
_ID_NAME = re.compile(r"(?:^id|Id)$")


@functools.cache
def document() -> dict:
    return yaml.safe_load(SPEC.read_text())


def operations() -> dict[tuple[str, str], dict]:
    """`(METHOD, path)` → operation, with the path item's parameters folded in. SCIM (/scim/v2)
    is left out: it takes an organization's SCIM token, not an account's session, and answers in
    SCIM's own error body; tests/accounts/scim has its authentication, bad input and isolation tests."""
    found = {}
    for path, item in document()["paths"].items():
        if path.startswith("/scim/v2"):
            continue
        for method, operation in item.items():
            if method in METHODS:
                parameters = [resolve(p) for p in item.get("parameters", []) + operation.get("parameters", [])]
                found[(method.upper(), path)] = {**operation, "parameters": parameters}
    return found


def resolve(node: dict) -> dict:
    while "$ref" in node:
        target = document()
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        node = target
    return node


def body_schema(operation: dict) -> dict | None:
    content = operation.get("requestBody", {}).get("content", {})
    return resolve(content["application/json"]["schema"]) if "application/json" in content else None


def id_fields(operation: dict) -> set[str]:
    """Where the request names a record: path parameters, `…Id` query parameters and body fields."""
    names = {f"path:{p['name']}" for p in operation["parameters"] if p["in"] == "path"}
    names |= {
        f"query:{p['name']}" for p in operation["parameters"] if p["in"] == "query" and _ID_NAME.search(p["name"])
    }
    schema = body_schema(operation)
    if schema is not None:
        names |= {f"body:{name}" for name in _property_names(schema, depth=0) if _ID_NAME.search(name)}
    return names


def _property_names(schema: dict, depth: int) -> set[str]:
    schema = resolve(schema)
    if depth > 8:
        return set()
    names = set(schema.get("properties", {}))
    for key in ("oneOf", "anyOf", "allOf"):
        for branch in schema.get(key, []):
            names |= _property_names(branch, depth + 1)
    for child in schema.get("properties", {}).values():
        names |= _property_names(child, depth + 1)
    if "items" in schema:
        names |= _property_names(schema["items"], depth + 1)
    return names
