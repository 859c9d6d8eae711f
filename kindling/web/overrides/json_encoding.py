"""orjson for both of the web edge's JSON encoders: Connexion's jsonifier and Flask's JSON
provider, both set through public settings (`FlaskApp(jsonifier=)`, `app.json`).

A 100-act page's JSON costs a tenth with orjson of what the standard library takes (README,
"Framework overrides"; `python -m benchmarks.instructions --database-url … --redis-url …`).
`tests/web/test_overrides.py` fails if either framework stops encoding through them.
"""

from __future__ import annotations

import typing as t

import orjson
from connexion.jsonifier import Jsonifier
from flask.json.provider import JSONProvider

from kindling.platform.jsoncodec import dumps


class OrjsonJsonifier(Jsonifier):
    """Connexion's jsonifier for JSON responses. Connexion's own would pass `cls=` and append a
    newline, neither of which orjson takes; FlaskApp accepts the bytes as they are."""

    def __init__(self) -> None:
        super().__init__(orjson)

    def dumps(self, data: t.Any, **_kwargs: t.Any) -> bytes:
        return dumps(data)


class OrjsonProvider(JSONProvider):
    """Flask's JSON provider (`flask.jsonify`, `request.get_json`). Flask wants text back, and
    callers may pass the standard library's keyword arguments, which orjson has no use for."""

    def dumps(self, obj: t.Any, **_kwargs: t.Any) -> str:
        return dumps(obj).decode()

    def loads(self, s: str | bytes, **_kwargs: t.Any) -> t.Any:
        return orjson.loads(s)
