"""Multipart uploads: Connexion parses them to validate their fields, and Flask parses them
again for the handler; Connexion's parse must answer malformed bodies with 400 and close
the files it never reads."""

from __future__ import annotations

from connexion.datastructures import MediaTypeDict
from connexion.validators import VALIDATOR_MAP, MultiPartFormDataValidator
from starlette.datastructures import FormData
from starlette.formparsers import MultiPartException, MultiPartParser

from kindling.errors import BadRequest


class _ValidationParser(MultiPartParser):
    async def parse(self) -> FormData:
        try:
            form = await super().parse()
        except MultiPartException as exc:
            raise BadRequest(f"The multipart body is malformed: {exc.message}") from None
        # Validation looks at field names only; left open, each file would leak until collected.
        await form.close()
        return form


class _MultiPartValidator(MultiPartFormDataValidator):
    @property
    def _form_parser_cls(self):
        return _ValidationParser


VALIDATOR_MAP_OVERRIDES = {
    "body": MediaTypeDict({**VALIDATOR_MAP["body"], "multipart/form-data": _MultiPartValidator}),
}
