"""Handler signatures worked out once, at start-up.

Connexion asks which arguments a handler takes on every request (`inspect.signature`).
`inspect.signature` returns a function's own `__signature__` when it has one (PEP 362), so each
is set here once, to exactly what inspection finds. Nothing of Connexion is replaced: were it to
stop asking, only the saving would go. The saving, a twentieth of a cached statistics read
(README, "Framework overrides"), is measured by
`python -m benchmarks.instructions --database-url … --redis-url …` with `settle_handlers` and
without it. `tests/web/test_overrides.py` fails if Connexion stops passing arguments by the
signature it inspects; `tests/web/test_signatures.py` checks that every settled
signature is the one inspection finds.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable

from kindling.web.operations import HTTP_METHODS


def settle(function: Callable) -> Callable:
    """Give the innermost of `function`'s wrappers (the one Connexion inspects) its signature."""
    function = inspect.unwrap(function)
    function.__signature__ = inspect.signature(function)  # type: ignore[attr-defined]  # typeshed's Callable has no __signature__; inspect reads it
    return function


def settle_handlers(spec: dict) -> None:
    """Settle the signature of every operation's handler in `spec`."""
    for item in spec["paths"].values():
        for method, operation in item.items():
            if method in HTTP_METHODS:
                module = importlib.import_module(operation["x-openapi-router-controller"])
                settle(getattr(module, operation["operationId"]))
