"""Authorization: the one step that refuses a caller whose role the operation's `x-roles` does
not name. Rules that depend on the data (not the sender, in the reporting line) stay in the
services."""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from kindling.errors import Forbidden
from kindling.web.authentication import principal_of
from kindling.web.operations import Operations


class AuthorizationMiddleware:
    """Runs after Connexion's security step, which has already answered 401 to a caller without
    a session on an operation that needs one."""

    def __init__(self, app: ASGIApp, *, operations: Operations) -> None:
        self.app = app
        self.operations = operations

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            operation = self.operations.routed(scope)
            if operation is not None and not operation.admits(principal_of(scope)):
                raise Forbidden(operation.refusal)
        await self.app(scope, receive, send)
