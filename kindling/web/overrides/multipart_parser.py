"""Multipart uploads: Connexion parses them to validate their fields, and Flask parses them
again for the handler; Connexion's parse must answer malformed bodies with 400 and close the
files it never reads.

This replaces a non-public hook of Connexion's, `MultiPartFormDataValidator._form_parser_cls`,
with a subclass of Starlette's `MultiPartParser`. What it gains is correctness, not speed: with
Connexion's own parser a malformed multipart body is a 500 `internal_error`, and every uploaded
file's spooled temporary file stays open until the garbage collector finds it (a
ResourceWarning per upload). `tests/web/test_overrides.py` fails on each if Connexion stops
parsing through the hook.
"""

from __future__ import annotations

from starlette.datastructures import FormData
from starlette.formparsers import MultiPartException, MultiPartParser

from kindling.errors import BadRequest
from kindling.web.overrides.body_validators import StructuredMultiPartValidator


class _ValidationParser(MultiPartParser):
    async def parse(self) -> FormData:
        try:
            form = await super().parse()
        except MultiPartException as exc:
            raise BadRequest(f"The multipart body is malformed: {exc.message}") from None
        # Validation looks at field names only; left open, each file would leak until collected.
        await form.close()
        return form


class MultiPartValidator(StructuredMultiPartValidator):
    @property
    def _form_parser_cls(self) -> type[MultiPartParser]:
        return _ValidationParser
