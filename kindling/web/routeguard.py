"""Requests the router would mishandle, answered before routing from the spec's own paths.

Starlette's mount pattern does not match an encoded newline, so such a path would fall through
to Flask without its operation and fail with a 500. And a literal path is matched by a template
too (`/api/compliance/export` by `/api/compliance/{framework}`): a method the literal path lacks
would reach the template's operation instead of a 405. (Any other refused method is Starlette's
405, whose Allow header kindling.web.errors completes.)
"""

from __future__ import annotations

import re

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Receive, Scope, Send

from kindling.errors import NotFound
from kindling.web.operations import Operations

CONTROL_CHARACTERS = re.compile(r"[\x00-\x1f\x7f]")


class RouteGuardMiddleware:
    """404 for paths with control characters; 405 for a method a literal path does not have."""

    def __init__(self, app: ASGIApp, *, operations: Operations) -> None:
        self.app = app
        self.literal = operations.literal

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            path = scope["path"]
            if CONTROL_CHARACTERS.search(path):
                raise NotFound("No such endpoint")
            methods = self.literal.get(path)
            if methods is not None and scope["method"] not in methods:
                raise HTTPException(405, headers={"Allow": ", ".join(sorted(methods))})
        await self.app(scope, receive, send)
