"""The app `kindling serve` runs, with a `Server-Timing` header on every response, for benchmarks.

`Server-Timing: app;dur=<ms>` is the time from the request entering the application to the start
of its response: rate limiting and authentication, validation, the handler and its queries, and
JSON encoding. It leaves out the network and uvicorn's HTTP parsing, which the client's own clock
adds. Configuration comes from the environment, exactly as for `kindling serve`.

    python benchmarks/server_timing.py --port 8000
"""

from __future__ import annotations

import argparse
import time

import uvicorn

from kindling.web.app import app_from_environment


class ServerTiming:
    """ASGI middleware that reports the application's own time in a `Server-Timing` header."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()

        async def send_timed(message):
            if message["type"] == "http.response.start":
                duration = (time.perf_counter() - started) * 1000
                headers = list(message.get("headers", [])) + [(b"server-timing", f"app;dur={duration:.3f}".encode())]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_timed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    uvicorn.run(ServerTiming(app_from_environment()), host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
