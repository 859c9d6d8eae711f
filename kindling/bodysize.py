"""Request body limits, enforced while the body streams in rather than after."""

from __future__ import annotations

from kindling.errors import PayloadTooLarge

JSON_LIMIT = 64 * 1024
UPLOAD_LIMIT = 1024 * 1024
# A multipart body carries a little framing around the file it holds.
MULTIPART_OVERHEAD = 16 * 1024


def limit_for(content_type: str) -> int:
    if content_type.startswith("multipart/form-data"):
        return UPLOAD_LIMIT + MULTIPART_OVERHEAD
    return JSON_LIMIT


class BodySizeMiddleware:
    """Answers 413 for bodies over the limit, by Content-Length or by counting the stream."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers", []))
        limit = limit_for(headers.get(b"content-type", b"").decode("latin-1").lower())
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise PayloadTooLarge(f"Request body exceeds the limit of {limit // 1024} KB")
        received = 0

        async def counting_receive():
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise PayloadTooLarge(f"Request body exceeds the limit of {limit // 1024} KB")
            return message

        await self.app(scope, counting_receive, send)
