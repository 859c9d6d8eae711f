"""The HTTP protocol `kindling serve` runs: uvicorn's httptools protocol, with a bound on a
request's head.

httptools, unlike h11, hands the app requests with long targets and large headers, so the app
refuses them with its error envelope (414, 431; kindling.web.requestguard). But it gathers a
head of any size to do so, joining the pieces as they arrive. This protocol counts a request's
head as it arrives and, once it passes MAX_HEAD, answers in the same envelope and closes the
connection instead of feeding the parser more. uvicorn takes the class through its public
`http` setting; it overrides the asyncio `data_received` and the parser callbacks
`on_headers_complete` and `on_message_complete`, and writes to the protocol's `transport`.
What it gains is safety: without it, a multi-megabyte head costs memory and quadratic CPU before
the app can refuse it. `tests/web/test_overrides.py` drives uvicorn's own protocol machinery
through it and fails if uvicorn stops calling those hooks.
"""

from __future__ import annotations

import asyncio
import http

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from kindling.errors import ApiError
from kindling.web.errors import envelope
from kindling.web.requestguard import TARGET_LIMIT, headers_too_large, target_too_long

# Far above the app's own limits of 8 KB of target and 16 KB of headers.
MAX_HEAD = 64 * 1024
# How long what still arrives after a refusal is read and dropped before the connection closes.
LINGER_SECONDS = 1.0
_END_OF_HEAD = b"\r\n\r\n"


class BoundedHttpToolsProtocol(HttpToolsProtocol):
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._refused = False
        self._start_head()

    def _start_head(self) -> None:
        self._in_head = True
        self._head_size = 0
        self._line_size = 0
        self._line_ended = False

    def on_headers_complete(self) -> None:
        self._in_head = False
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._start_head()

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return
        if self._in_head:
            end = data.find(_END_OF_HEAD)
            head = data if end < 0 else data[: end + len(_END_OF_HEAD)]
            if not self._line_ended:
                end_of_line = head.find(b"\r\n")
                self._line_ended = end_of_line >= 0
                self._line_size += len(head) if end_of_line < 0 else end_of_line
            self._head_size += len(head)
            if self._head_size > MAX_HEAD:
                # As the app does, a long target first.
                self._refuse(target_too_long() if self._line_size > TARGET_LIMIT else headers_too_large())
                return
        super().data_received(data)

    def _refuse(self, error: ApiError) -> None:
        body = envelope(error)
        status = f"HTTP/1.1 {error.status} {http.HTTPStatus(error.status).phrase}\r\n".encode()
        head = [status, *(name + b": " + value + b"\r\n" for name, value in self.server_state.default_headers)]
        head += [
            b"content-type: application/json\r\n",
            b"content-length: %d\r\n" % len(body),
            b"connection: close\r\n\r\n",
        ]
        self.transport.write(b"".join(head) + body)
        # Closing with unread bytes would reset the connection, and the client could lose the
        # answer: end it, then drop what still arrives for a moment before closing.
        self.transport.write_eof()
        self._refused = True
        asyncio.get_running_loop().call_later(LINGER_SECONDS, self.transport.close)
