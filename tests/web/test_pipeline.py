"""The request pipeline is the one kindling/web/app.py's docstring lists, step by step."""

from __future__ import annotations

import dataclasses
import functools
import re

from connexion.middleware.routing import RoutingMiddleware

from kindling.web import app as factory
from kindling.web.operations import Operations

# Steps only some settings have.
OPTIONAL = {
    "SpecMiddleware": "api_docs",
    "SwaggerUIMiddleware": "api_docs",
    "ResponseValidationMiddleware": "validate_responses",
}


def documented() -> list[str]:
    """The steps the docstring names, in its order: each item's names in backticks, before its
    colon and outside parentheses."""
    names = []
    for item in re.findall(r"^\d+\. ([^:]+):", factory.__doc__, re.MULTILINE):
        names += re.findall(r"`(\w+Middleware)`", re.sub(r"\([^)]*\)", "", item))
    return names


def names(steps: list) -> list[str]:
    return [(step.func if isinstance(step, functools.partial) else step).__name__ for step in steps]


def test_the_docstring_lists_every_step_of_every_setting_in_order(app, runtime, settings):
    assert "Flask" in factory.__doc__ and len(documented()) >= 15
    in_use = names(app.middleware.middlewares)
    assert in_use == [name for name in documented() if not OPTIONAL.get(name) or getattr(settings, OPTIONAL[name])]
    spec = factory.load_spec()
    for api_docs in (True, False):
        for validate_responses in (True, False):
            chosen = dataclasses.replace(settings, api_docs=api_docs, validate_responses=validate_responses)
            expected = [name for name in documented() if not OPTIONAL.get(name) or getattr(chosen, OPTIONAL[name])]
            assert names(factory.pipeline(chosen, runtime, spec, Operations(spec["paths"]))) == expected


def test_each_request_is_routed_once(app):
    assert [step for step in app.middleware.middlewares if step is RoutingMiddleware] == [RoutingMiddleware]
