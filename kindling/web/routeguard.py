"""Paths the router would mishandle, answered before routing.

Starlette's mount pattern does not match an encoded newline, so such a path would fall through
to Flask without its operation and fail with a 500. (A refused method is Starlette's 405, whose
Allow header kindling.web.errors completes.)
"""

from __future__ import annotations

import re

from kindling.errors import NotFound

CONTROL_CHARACTERS = re.compile(r"[\x00-\x1f\x7f]")


class RouteGuardMiddleware:
    """404 for paths with control characters."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and CONTROL_CHARACTERS.search(scope["path"]):
            raise NotFound("No such endpoint")
        await self.app(scope, receive, send)
