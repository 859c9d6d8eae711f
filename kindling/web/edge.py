"""The outermost step of every request: every failure leaves here, and every response carries
the rate-limit headers.

Whichever layer fails (a Kindling step, Connexion's router, security step or validation, a
handler, or Flask), its exception reaches this step, which answers it with
kindling.web.errors.send_error; nothing else answers an error. It takes the place of
Connexion's ServerErrorMiddleware and ExceptionMiddleware, whose handlers would answer errors
their own way. A failure after the response has started cannot be answered: it is raised to
the server, which closes the connection.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kindling.web.errors import error_for, send_error
from kindling.web.operations import Operations
from kindling.web.ratelimit import limit_headers


class EdgeMiddleware:
    def __init__(self, app: ASGIApp, *, operations: Operations) -> None:
        self.app = app
        self.operations = operations

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def send_with_limits(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                headers = limit_headers(scope)
                if headers:
                    message = {**message, "headers": [*message.get("headers", ()), *headers]}
            await send(message)

        try:
            await self.app(scope, receive, send_with_limits)
        except Exception as exc:
            if started:
                raise
            await send_error(scope, send_with_limits, error_for(exc, scope, self.operations))
