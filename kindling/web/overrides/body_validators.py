"""Connexion's request body validators, reporting every fault of a body field by field.

Connexion's validators report the first schema error as jsonschema prints it, submitted value
and schema included: a refused sign-up would echo the submitted password. These subclasses
override `_validate`, the non-public hook Connexion's body validators call after parsing, and
read the attributes Connexion sets up (`_schema`, `_nullable`, `_strict_validation`,
`_validator`). The JSON one also fills in the spec's defaults, so handlers never repeat them.
What they gain is correctness, not speed. `tests/web/test_overrides.py` fails if Connexion
stops calling the hook or setting those attributes.
"""

from __future__ import annotations

import typing as t

from connexion.json_schema import Draft4RequestValidator
from connexion.validators import FormDataValidator, JSONRequestBodyValidator, MultiPartFormDataValidator
from jsonschema import Draft4Validator, ValidationError, validators
from jsonschema.protocols import Validator

from kindling.errors import field_error, quoted, refused
from kindling.web.refusals import schema_errors


def _filling_defaults(validator_class: type[Validator]) -> type[Validator]:
    """`validator_class`, also setting each absent property that has a default in the schema
    (jsonschema's documented recipe; Connexion's own defaults validator fails on a body that
    is not an object)."""
    check_properties = validator_class.VALIDATORS["properties"]

    def properties(
        validator: Validator, properties: dict, instance: t.Any, schema: dict
    ) -> t.Iterator[ValidationError]:
        if validator.is_type(instance, "object"):
            for name, subschema in properties.items():
                if "default" in subschema:
                    instance.setdefault(name, subschema["default"])
        yield from check_properties(validator, properties, instance, schema)

    return validators.extend(validator_class, {"properties": properties})


_DefaultsValidator = _filling_defaults(Draft4RequestValidator)


def _declares_defaults(schema: t.Any) -> bool:
    if isinstance(schema, dict):
        return "default" in schema or any(_declares_defaults(value) for value in schema.values())
    if isinstance(schema, list):
        return any(_declares_defaults(value) for value in schema)
    return False


# Whether each operation's body schema declares a default anywhere, by the schema's identity:
# the spec's schemas live as long as the app.
_DEFAULTS_DECLARED: dict[int, bool] = {}


class StructuredJSONBodyValidator(JSONRequestBodyValidator):
    """Also fills in the spec's defaults, passing the completed body on, so handlers never
    repeat them. A body whose schema declares no default is passed on byte for byte: the
    providers' webhooks are verified over their exact bytes."""

    def _validate(self, body: t.Any) -> dict | None:
        if not self._nullable and body is None:
            raise refused([field_error("body", "", "must not be empty")])
        key = id(self._schema)
        if key not in _DEFAULTS_DECLARED:
            # Connexion hands the spec's components along with the schema, to resolve references.
            own = {name: value for name, value in self._schema.items() if name != "components"}
            _DEFAULTS_DECLARED[key] = _declares_defaults(own)
        # Read by Connexion after this hook: re-encode the body only when defaults may be added.
        self.MUTABLE_VALIDATION = _DEFAULTS_DECLARED[key]
        validator = _DefaultsValidator(self._schema, format_checker=Draft4Validator.FORMAT_CHECKER)
        errors = schema_errors("body", validator.iter_errors(body))
        if errors:
            raise refused(errors)
        return body


class _StructuredFormMixin(FormDataValidator):
    def _validate(self, body: t.Any) -> dict | None:
        if not isinstance(body, dict):
            raise refused([field_error("body", "", "must be a form")])
        # A form whose schema says `additionalProperties: true` takes fields it does not name:
        # Slack's forms gain fields over time, and refusing one would refuse Slack.
        if self._strict_validation and self._schema.get("additionalProperties") is not True:
            extra = [name for name in body if name not in self._schema.get("properties", {})]
            if extra:
                raise refused([field_error("body", quoted(name), "is not allowed") for name in extra])
        errors = schema_errors("body", self._validator.iter_errors(body))
        if errors:
            raise refused(errors)
        return body


class StructuredFormDataValidator(_StructuredFormMixin, FormDataValidator):
    pass


class StructuredMultiPartValidator(_StructuredFormMixin, MultiPartFormDataValidator):
    pass
