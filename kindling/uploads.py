"""Multipart uploads: Connexion parses them to validate their fields, and Flask parses them
again for the handler, so the files of Connexion's parse are never read and must be closed."""

from __future__ import annotations

from connexion.datastructures import MediaTypeDict
from connexion.validators import VALIDATOR_MAP, MultiPartFormDataValidator
from starlette.datastructures import FormData
from starlette.formparsers import MultiPartParser


class _ValidationParser(MultiPartParser):
    async def parse(self) -> FormData:
        form = await super().parse()
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
