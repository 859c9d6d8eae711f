"""Signatures settled at start-up (kindling/web/overrides/handler_signatures.py) are the ones inspection finds."""

from __future__ import annotations

import importlib
import inspect
import types

from kindling.web.app import load_spec
from kindling.web.operations import HTTP_METHODS


def inspected(function) -> inspect.Signature:
    """The signature of a fresh copy of `function`, which has no `__signature__` of its own."""
    copy = types.FunctionType(
        function.__code__, function.__globals__, function.__name__, function.__defaults__, function.__closure__
    )
    copy.__kwdefaults__ = function.__kwdefaults__
    copy.__annotations__ = function.__annotations__
    return inspect.signature(copy)


def test_every_handler_carries_its_own_signature(app):
    spec = load_spec()
    functions = [
        getattr(importlib.import_module(operation["x-openapi-router-controller"]), operation["operationId"])
        for item in spec["paths"].values()
        for method, operation in item.items()
        if method in HTTP_METHODS
    ]
    assert len(functions) > 50
    for function in functions:
        function = inspect.unwrap(function)
        assert "__signature__" in vars(function), function.__qualname__
        assert function.__signature__ == inspected(function), function.__qualname__
