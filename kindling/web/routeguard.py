"""Requests the router would mishandle, answered before routing from the spec's own paths.

Connexion routes each operation as its own Starlette route, so a wrong method on a path
with several operations gets a 405 naming only one of them in `Allow`; and Starlette's
mount pattern does not match an encoded newline, so such a path falls through to Flask
without its operation and fails with a 500.
"""

from __future__ import annotations

import re

from starlette.exceptions import HTTPException
from starlette.routing import compile_path

from kindling.errors import NotFound

HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
CONTROL_CHARACTERS = re.compile(r"[\x00-\x1f\x7f]")


class RouteGuardMiddleware:
    """404 for paths with control characters; 405 listing every method of the path otherwise."""

    def __init__(self, app, *, paths: dict) -> None:
        self.app = app
        self.literal: dict[str, set[str]] = {}
        self.templated = []
        for template, item in paths.items():
            methods = {method.upper() for method in item if method in HTTP_METHODS}
            if "GET" in methods:
                methods.add("HEAD")
            if "{" in template:
                self.templated.append((compile_path(template)[0], template.count("{"), methods))
            else:
                self.literal[template] = methods

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            path = scope["path"]
            if CONTROL_CHARACTERS.search(path):
                raise NotFound("No such endpoint")
            # A literal path wins over a template that would also match it (/stats over /{id}).
            allowed = self.literal.get(path) or self._templated_methods(path)
            if allowed and scope["method"] not in allowed:
                raise HTTPException(405, headers={"Allow": ", ".join(sorted(allowed))})
        await self.app(scope, receive, send)

    def _templated_methods(self, path: str) -> set[str]:
        matches = [(parameters, methods) for pattern, parameters, methods in self.templated if pattern.match(path)]
        fewest = min((parameters for parameters, _ in matches), default=0)
        return set().union(*(methods for parameters, methods in matches if parameters == fewest))
