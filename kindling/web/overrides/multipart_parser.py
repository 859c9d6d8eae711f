"""Multipart uploads: Connexion parses them to validate their fields, and Flask parses them
again for the handler; Connexion's parse must answer malformed bodies with 400 and close
the files it never reads.

This replaces a private hook of Connexion's, `MultiPartFormDataValidator._form_parser_cls`.
What it gains is correctness, not speed: with Connexion's own parser a malformed multipart
body is a 500 `internal_error`, and every uploaded file's spooled temporary file stays open
until the garbage collector finds it (a ResourceWarning per upload). `pytest tests/test_uploads.py`
shows both; it fails on each when `validator_map` is left out of `create_app`. The hook is
checked when this module is imported, so a Connexion that changed it stops the server at start.
"""

from __future__ import annotations

import inspect

from connexion.validators import MultiPartFormDataValidator
from starlette.datastructures import FormData
from starlette.formparsers import MultiPartException, MultiPartParser

from kindling.errors import BadRequest
from kindling.web.overrides.body_validators import StructuredMultiPartValidator, validator_map


def check_connexion(validator: type = MultiPartFormDataValidator) -> None:
    """Fail loudly unless `validator` still parses multipart bodies through `_form_parser_cls`."""
    hook = inspect.getattr_static(validator, "_form_parser_cls", None)
    parse = getattr(validator, "_parse", None)
    if (
        not isinstance(hook, property)
        or hook.fget(None) is not MultiPartParser
        or parse is None
        or "self._form_parser_cls(" not in inspect.getsource(parse)
    ):
        raise RuntimeError(
            f"{validator.__module__}.{validator.__qualname__} no longer parses multipart bodies through "
            "the `_form_parser_cls` property that kindling/web/overrides/multipart_parser.py replaces; adapt that module to this Connexion"
        )


check_connexion()


class _ValidationParser(MultiPartParser):
    async def parse(self) -> FormData:
        try:
            form = await super().parse()
        except MultiPartException as exc:
            raise BadRequest(f"The multipart body is malformed: {exc.message}") from None
        # Validation looks at field names only; left open, each file would leak until collected.
        await form.close()
        return form


class _MultiPartValidator(StructuredMultiPartValidator):
    @property
    def _form_parser_cls(self):
        return _ValidationParser


VALIDATOR_MAP_OVERRIDES = validator_map(multipart=_MultiPartValidator)
