"""The contract, served as written, with a server URL that Swagger UI can use."""

from __future__ import annotations

import json

import yaml
from starlette.types import ASGIApp, Receive, Scope, Send

SPEC_JSON_PATH = "/api/openapi.json"
SPEC_YAML_PATH = "/api/openapi.yaml"


class SpecMiddleware:
    """Answers GET (and HEAD) of the spec paths with openapi.yaml as written, `$ref`s and all.

    Connexion's own copy replaces `servers` with `[{url: <root path>}]`, `""` outside a proxy,
    which leaves Swagger UI's server list blank. This keeps the document's server entry, and
    puts the root path a proxy mounts the app under (if any) into its URL.
    """

    def __init__(self, app: ASGIApp, *, spec: dict) -> None:
        self.app = app
        self.spec = spec
        self._bodies: dict[tuple[str, str], bytes] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["path"] not in (SPEC_JSON_PATH, SPEC_YAML_PATH)
            or scope["method"] not in ("GET", "HEAD")
        ):
            await self.app(scope, receive, send)
            return
        media_type = "application/json" if scope["path"] == SPEC_JSON_PATH else "application/yaml"
        body = self._body(media_type, scope.get("root_path", ""))
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", media_type.encode()), (b"content-length", str(len(body)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else body})

    def _body(self, media_type: str, root_path: str) -> bytes:
        key = (media_type, root_path)
        if key not in self._bodies:
            servers = [{**server, "url": root_path.rstrip("/") + server["url"]} for server in self.spec["servers"]]
            document = {**self.spec, "servers": servers}
            if media_type == "application/json":
                self._bodies[key] = json.dumps(document, ensure_ascii=False).encode()
            else:
                self._bodies[key] = yaml.safe_dump(document, sort_keys=False, allow_unicode=True).encode()
        return self._bodies[key]
