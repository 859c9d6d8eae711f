"""Requests the router would mishandle, answered before routing from the spec's own paths.

Connexion routes each operation as its own Starlette route, so a wrong method on a path
with several operations gets a 405 naming only one of them in `Allow`; and Starlette's
mount pattern does not match an encoded newline, so such a path falls through to Flask
without its operation and fails with a 500.
"""

from __future__ import annotations

import re

from starlette.exceptions import HTTPException

from kindling.errors import NotFound
from kindling.web.operations import Operations

CONTROL_CHARACTERS = re.compile(r"[\x00-\x1f\x7f]")


class RouteGuardMiddleware:
    """404 for paths with control characters; 405 listing every method of the path otherwise."""

    def __init__(self, app, *, operations: Operations) -> None:
        self.app = app
        self.operations = operations

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            path = scope["path"]
            if CONTROL_CHARACTERS.search(path):
                raise NotFound("No such endpoint")
            allowed = self.operations.of_path(path)
            if allowed and scope["method"] not in allowed:
                raise HTTPException(405, headers={"Allow": ", ".join(sorted(allowed))})
        await self.app(scope, receive, send)
