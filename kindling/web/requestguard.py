"""What any request may carry: bodies within their limits, JSON that every layer can read,
and only text the database can store.

PostgreSQL cannot store NUL in text, and no UTF-8 encoder takes an unpaired surrogate, so
both are refused at the edge for every endpoint instead of failing deep inside whichever
query first meets them. So is what Python's JSON parser accepts but nothing after it can
handle: nesting deep enough to exhaust the recursion limit, integers of thousands of
digits, and NaN and Infinity (which are not JSON).
"""

from __future__ import annotations

import json
import re
from typing import NoReturn

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kindling.errors import BadRequest, HeadersTooLarge, PayloadTooLarge, UriTooLong, unsupported_media_type
from kindling.platform.request import UPLOAD_LIMIT
from kindling.platform.storable_text import carries_unstorable_text

# The HTTP server passes on longer ones, up to a head of 64 KB (kindling.web.overrides.http_protocol): refused
# here, they are answered with the error envelope.
TARGET_LIMIT = 8 * 1024
HEADERS_LIMIT = 16 * 1024
JSON_LIMIT = 64 * 1024
# A multipart body carries a little framing around the file it holds.
MULTIPART_OVERHEAD = 16 * 1024
# Far beyond any body of the API or of the providers' webhooks, far below the recursion limit.
MAX_JSON_DEPTH = 64
# Strings (skipped whole, so brackets inside them do not count) and brackets.
_JSON_NESTING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)
_OPENING = frozenset(b"[{")


def target_too_long() -> UriTooLong:
    return UriTooLong(f"The request's path and query exceed the limit of {TARGET_LIMIT // 1024} KB")


def headers_too_large() -> HeadersTooLarge:
    return HeadersTooLarge(f"The request's headers exceed the limit of {HEADERS_LIMIT // 1024} KB")


def limit_for(content_type: str) -> int:
    if content_type.startswith("multipart/form-data"):
        return UPLOAD_LIMIT + MULTIPART_OVERHEAD
    return JSON_LIMIT


class RequestGuardMiddleware:
    """Answers 414 and 431 for a path and query or headers over their limits, 413 for bodies over
    the limit (by Content-Length or by counting the stream), 415 for a body without a
    Content-Type, and 400 for NUL in the query and for JSON bodies that are too deep, not quite
    JSON, or carry unstorable text (paths: kindling.web.routeguard)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        query = scope.get("query_string", b"")
        if len(scope.get("raw_path") or scope["path"]) + len(query) > TARGET_LIMIT:
            raise target_too_long()
        if sum(len(name) + len(value) for name, value in scope.get("headers", [])) > HEADERS_LIMIT:
            raise headers_too_large()
        if b"%00" in query:
            raise BadRequest("NUL characters are not allowed in a request")
        headers = dict(scope.get("headers", []))
        content_type = headers.get(b"content-type", b"").decode("latin-1").lower()
        declared = headers.get(b"content-length")
        if not content_type and (declared not in (None, b"0") or b"transfer-encoding" in headers):
            # Validation would take it for JSON, and the handler for bytes.
            raise unsupported_media_type("is required with a body")
        limit = limit_for(content_type)
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise PayloadTooLarge(f"Request body exceeds the limit of {limit // 1024} KB")
        receive = _counting(receive, limit)
        if "json" in content_type:
            # Inbound webhooks must answer their sender 2xx even for an event with NUL in it
            # (else it is retried for days), so they look for unstorable text themselves, after the signature.
            receive = await _readable_json(receive, storable=not scope["path"].startswith("/webhooks/"))
        await self.app(scope, receive, send)


def _counting(receive: Receive, limit: int) -> Receive:
    received = 0

    async def counting_receive() -> Message:
        nonlocal received
        message = await receive()
        if message["type"] == "http.request":
            received += len(message.get("body", b""))
            if received > limit:
                raise PayloadTooLarge(f"Request body exceeds the limit of {limit // 1024} KB")
        return message

    return counting_receive


async def _readable_json(receive: Receive, *, storable: bool) -> Receive:
    """Read the (small, limited) JSON body, check it, and hand it on unchanged."""
    chunks = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return _replay([message], then=receive)
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    body = b"".join(chunks)
    if _depth(body) > MAX_JSON_DEPTH:
        raise BadRequest(f"The JSON body is nested more than {MAX_JSON_DEPTH} levels deep")
    try:
        document = json.loads(body, parse_constant=_not_json)
    except (json.JSONDecodeError, UnicodeDecodeError):
        pass  # malformed: validation reports where, as for any other bad body
    except ValueError:
        raise BadRequest("A number in the JSON body has too many digits") from None
    else:
        if storable and carries_unstorable_text(document):
            raise BadRequest("NUL characters and unpaired surrogates are not allowed in a request")
    return _replay([{"type": "http.request", "body": body, "more_body": False}], then=receive)


def _depth(body: bytes) -> int:
    depth = deepest = 0
    for token in _JSON_NESTING.finditer(body):
        if token.end() - token.start() == 1:
            depth += 1 if body[token.start()] in _OPENING else -1
            deepest = max(deepest, depth)
            if deepest > MAX_JSON_DEPTH:
                break
    return deepest


def _not_json(constant: str) -> NoReturn:
    raise BadRequest(f"{constant} is not a JSON value")


def _replay(messages: list[Message], *, then: Receive) -> Receive:
    async def replay() -> Message:
        if messages:
            return messages.pop(0)
        return await then()

    return replay
