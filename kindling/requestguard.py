"""What any request may carry: bodies within their limits, and no NUL characters in text.

PostgreSQL cannot store NUL in text, so it is refused at the edge for every endpoint
instead of failing deep inside whichever query first meets it.
"""

from __future__ import annotations

import re

from kindling.errors import BadRequest, PayloadTooLarge

JSON_LIMIT = 64 * 1024
UPLOAD_LIMIT = 1024 * 1024
# A multipart body carries a little framing around the file it holds.
MULTIPART_OVERHEAD = 16 * 1024
# A JSON escape of NUL: \u0000 preceded by an even number of backslashes (else it is literal text).
_JSON_NUL = re.compile(rb"(?<!\\)(?:\\\\)*\\u0000")


def limit_for(content_type: str) -> int:
    if content_type.startswith("multipart/form-data"):
        return UPLOAD_LIMIT + MULTIPART_OVERHEAD
    return JSON_LIMIT


class RequestGuardMiddleware:
    """Answers 413 for bodies over the limit (by Content-Length or by counting the stream)
    and 400 for NUL characters in the query or a JSON body (paths: kindling.routeguard)."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if b"%00" in scope.get("query_string", b""):
            raise BadRequest("NUL characters are not allowed in a request")
        headers = dict(scope.get("headers", []))
        content_type = headers.get(b"content-type", b"").decode("latin-1").lower()
        limit = limit_for(content_type)
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise PayloadTooLarge(f"Request body exceeds the limit of {limit // 1024} KB")
        receive = _counting(receive, limit)
        # Inbound webhooks must answer their sender 2xx even for an event with NUL in it
        # (else it is retried for days), so they look for NUL themselves, after the signature.
        if "json" in content_type and scope["path"].startswith("/api/"):
            receive = await _nul_free_json(receive)
        await self.app(scope, receive, send)


def _counting(receive, limit: int):
    received = 0

    async def counting_receive():
        nonlocal received
        message = await receive()
        if message["type"] == "http.request":
            received += len(message.get("body", b""))
            if received > limit:
                raise PayloadTooLarge(f"Request body exceeds the limit of {limit // 1024} KB")
        return message

    return counting_receive


async def _nul_free_json(receive):
    """Read the (small, limited) JSON body, check it, and hand it on unchanged."""
    chunks = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return _replay([message])
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    body = b"".join(chunks)
    if b"\x00" in body or _JSON_NUL.search(body):
        raise BadRequest("NUL characters are not allowed in a request")
    return _replay([{"type": "http.request", "body": body, "more_body": False}], then=receive)


def _replay(messages: list, then=None):
    async def replay():
        if messages:
            return messages.pop(0)
        return await then()

    return replay
