"""Where Kindling replaces or extends a part of Connexion, Starlette, Flask or uvicorn: one
module per override, each with its reason and the test that guards it (README, "Framework
overrides")."""

from __future__ import annotations

from connexion.datastructures import MediaTypeDict
from connexion.validators import VALIDATOR_MAP

from kindling.web.overrides.body_validators import StructuredFormDataValidator, StructuredJSONBodyValidator
from kindling.web.overrides.multipart_parser import MultiPartValidator
from kindling.web.overrides.parameter_validator import StructuredParameterValidator


def validator_map() -> dict:
    """Connexion's `validator_map` (a documented setting) with the structured validators."""
    return {
        "parameter": StructuredParameterValidator,
        "body": MediaTypeDict(
            {
                **VALIDATOR_MAP["body"],
                "*/*json": StructuredJSONBodyValidator,
                "application/x-www-form-urlencoded": StructuredFormDataValidator,
                "multipart/form-data": MultiPartValidator,
            }
        ),
    }
