"""Connexion's per-operation decorators, built once per operation instead of on every request.

Connexion 3's FlaskApp wraps each handler in a fresh FlaskDecorator chain on every request,
inspecting the handler's signature each time, although the chain depends on the operation
alone (the request reaches it as an argument). Building it once saves about 110,000
instructions per request (callgrind), 3% of a cached statistics request.
"""

from __future__ import annotations

import functools

from connexion.apps.flask import FlaskOperation
from connexion.decorators import FlaskDecorator


class _DecoratedOnce(FlaskDecorator):
    def __call__(self, function):
        decorated = self.decorate(function)

        @functools.wraps(function)
        def wrapper(*_args, **_kwargs):
            return decorated(self.framework.get_request(uri_parser=self.uri_parser))

        return wrapper


def _fn(operation: FlaskOperation):
    return _DecoratedOnce(pythonic_params=operation.pythonic_params, jsonifier=operation.jsonifier)(operation._fn)


def install() -> None:
    """Make every FlaskOperation build its decorator chain on its first request only."""
    FlaskOperation.fn = functools.cached_property(_fn)
    FlaskOperation.fn.__set_name__(FlaskOperation, "fn")
