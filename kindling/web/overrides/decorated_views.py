"""Each operation's handler decorated once, not on every request.

Connexion's `FlaskOperation`, the view Flask calls for an operation, builds its chain of
decorators on every request: a new `FlaskDecorator`, its parameter and response decorators (the
parameter decorator inspecting the handler's signature), and a URI parser of the operation's
parameters. None of it depends on the request. Here, before the first request is dispatched,
each such view in Flask's `view_functions` (a public mapping) is replaced by the same chain,
built once by Connexion's own `FlaskDecorator`; the URI parser is made on the operation's first
request, since it is built from the routed operation. The handler receives exactly what
Connexion would pass it.

The saving is measured by `python -m benchmarks.instructions --database-url … --redis-url …`
with `decorate_views` and without it (README, "Framework overrides").
`tests/web/test_overrides.py` fails if a view is left undecorated or handlers stop receiving the
arguments Connexion passes.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

import flask
from connexion.apps.flask import FlaskOperation
from connexion.decorators import FlaskDecorator
from connexion.uri_parsing import AbstractURIParser


def decorate_views(flask_app: flask.Flask) -> None:
    """Replace every Connexion operation view of `flask_app` by its handler decorated once, before
    the first request is dispatched: Connexion registers the views only once its middleware
    stack is built, on the app's first call."""
    lock = threading.Lock()
    done = threading.Event()

    @flask_app.before_request
    def replace_views() -> None:
        if done.is_set():
            return
        with lock:
            for endpoint, view in list(flask_app.view_functions.items()):
                if isinstance(view, FlaskOperation):
                    flask_app.view_functions[endpoint] = decorated(view)
            done.set()


def decorated(view: FlaskOperation) -> Callable[..., Any]:
    """What `view` does on each request, with the decorators built now."""
    decorator = FlaskDecorator(pythonic_params=view.pythonic_params, jsonifier=view.jsonifier)
    # functools.update_wrapper set the handler as the view's __wrapped__.
    function = decorator.decorate(view.__wrapped__)
    parsers: list[AbstractURIParser] = []

    @functools.wraps(view.__wrapped__)
    def answer(*_args: Any, **_kwargs: Any) -> Any:
        if not parsers:  # two first requests at once make the same parser twice, harmlessly
            parsers.append(decorator.uri_parser)
        return function(decorator.framework.get_request(uri_parser=parsers[0]))

    return answer
