"""Refused requests, field by field: `{location, field, message}` for each fault, in words that
repeat nothing the client sent (no value, however long or secret, and no schema).

Connexion's validators report the first schema error as jsonschema prints it, submitted value
and schema included. These subclasses, plugged in through Connexion's `validator_map`, report
every error of the body or parameter instead, as `BadRequest` with `details.errors`.

The body validators override `_validate`, the hook Connexion's request body validators call
after parsing, and read the attributes they set up (`_validator`, `_schema`, `_nullable`,
`_strict_validation`). What that gains is correctness, not speed: without it a
refused sign-up echoes the submitted password. `pytest tests/test_errors.py` shows it.

The parameter validator overrides the public `validate` and `validate_request` and reads
the attributes `ParameterValidator.__init__` sets (`parameters`, `strict_validation`,
`security_query_params`). Besides the structured errors, `validate` skips the request parse
for an operation that takes no parameter and is asked without a query: 84,000 fewer
instructions of a health check's 2.2 million and a cached statistics read's 2.5 million
(`python -m benchmarks.instructions --database-url … --redis-url …`, with the skip and
without it). `tests/test_errors.py` shows that such an operation still refuses a query.

`check_connexion()` runs when this module is imported, so a Connexion that renamed the hooks
or those attributes stops the server at start instead of answering with its own errors.
"""

from __future__ import annotations

import collections
import inspect
import typing as t

from connexion.datastructures import MediaTypeDict
from connexion.json_schema import Draft4RequestValidator
from connexion.utils import is_null, is_nullable
from connexion.validators import (
    VALIDATOR_MAP,
    FormDataValidator,
    JSONRequestBodyValidator,
    MultiPartFormDataValidator,
    ParameterValidator,
)
from connexion.validators.abstract import AbstractRequestBodyValidator
from jsonschema import Draft4Validator, ValidationError, validators

from kindling.errors import dotted, field_error, quoted, refused


def schema_errors(location: str, errors: t.Iterable[ValidationError], prefix: tuple = ()) -> list[dict]:
    """Our field errors for jsonschema's, once each, sorted by field."""
    found = {}
    for error in errors:
        for item in _describe(location, error, prefix):
            found.setdefault((item["field"], item["message"]), item)
    return sorted(found.values(), key=lambda item: item["field"])


def _describe(location: str, error: ValidationError, prefix: tuple) -> list[dict]:
    path = (*prefix, *error.absolute_path)
    kind, expected, instance = error.validator, error.validator_value, error.instance
    if kind == "required":
        present = instance if isinstance(instance, dict) else {}
        return [field_error(location, dotted((*path, name)), "is required") for name in expected if name not in present]
    if kind == "additionalProperties" and isinstance(instance, dict):
        known = error.schema.get("properties", {})
        return [field_error(location, dotted((*path, name)), "is not allowed") for name in instance if name not in known]
    if kind in ("oneOf", "anyOf") and error.context:
        return _best_branch(location, error, prefix)
    return [field_error(location, dotted(path), _message(kind, expected, error.schema, error.message))]


def _best_branch(location: str, error: ValidationError, prefix: tuple) -> list[dict]:
    """For a value matching none of several shapes, the errors of the shape it came closest to:
    the branch with the fewest errors, the first of equals."""
    by_branch: dict[int, list[ValidationError]] = collections.defaultdict(list)
    for sub in error.context:
        by_branch[sub.schema_path[0]].append(sub)
    closest = min(by_branch, key=lambda branch: (_weight(by_branch[branch]), branch))
    return schema_errors(location, by_branch[closest], prefix)


def _weight(errors: list[ValidationError]) -> int:
    # A disallowed property counts once per property. A value outside a closed set (such as
    # `accountType`) says most plainly that the client meant another shape: it counts double.
    count = 0
    for error in errors:
        if error.validator == "additionalProperties" and isinstance(error.instance, dict):
            count += sum(name not in error.schema.get("properties", {}) for name in error.instance)
        else:
            count += 2 if error.validator in ("enum", "const") else 1
    return count


_TYPE_NAMES = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "object": "an object",
    "array": "an array",
    "null": "null",
}


def _message(kind: str, expected, schema: dict, schema_message: str = "") -> str:
    if kind == "type":
        names = expected if isinstance(expected, list) else [expected]
        return "must be " + " or ".join(_TYPE_NAMES.get(name, quoted(name)) for name in names)
    if kind == "minLength":
        return f"must be at least {expected} character{'s' if expected != 1 else ''}"
    if kind == "maxLength":
        return f"must be at most {expected} characters"
    if kind == "minimum":
        return f"must be more than {expected}" if schema.get("exclusiveMinimum") is True else f"must be at least {expected}"
    if kind == "maximum":
        return f"must be less than {expected}" if schema.get("exclusiveMaximum") is True else f"must be at most {expected}"
    if kind == "minItems":
        return f"must have at least {expected} item{'s' if expected != 1 else ''}"
    if kind == "maxItems":
        return f"must have at most {expected} items"
    if kind == "uniqueItems":
        return "must not repeat an item"
    if kind == "minProperties":
        return f"must have at least {expected} field{'s' if expected != 1 else ''}"
    if kind == "maxProperties":
        return f"must have at most {expected} fields"
    if kind == "enum":
        choices = ", ".join("null" if choice is None else quoted(choice) for choice in expected[:12])
        return f"must be one of: {choices}" + (", …" if len(expected) > 12 else "")
    if kind == "format":
        return f"must be a valid {quoted(expected)}"
    if kind == "pattern":
        return "is not in the expected format"
    if kind == "multipleOf":
        return f"must be a multiple of {expected}"
    if kind == "oneOf" and "valid under each of" in schema_message:
        return "matches more than one of the accepted shapes"
    if kind in ("oneOf", "anyOf"):
        return "matches none of the accepted shapes"
    if kind == "not":
        return "is not allowed"
    return "is not valid"


def check_connexion(
    base: type = AbstractRequestBodyValidator,
    validators: tuple[type, ...] = (JSONRequestBodyValidator, FormDataValidator),
    parameters: type = ParameterValidator,
) -> None:
    """Fail loudly unless Connexion's validators still work through the hooks and attributes
    the subclasses below use: body validators call `_validate` after parsing, and the
    parameter validator's `validate` hands its request to `validate_request`."""
    calls_hook = "self._validate(body)" in inspect.getsource(base.wrap_receive)
    base_init = inspect.getsource(base.__init__)
    sets_attributes = all(f"self.{name} =" in base_init for name in ("_schema", "_nullable", "_strict_validation"))
    has_validators = all(
        isinstance(inspect.getattr_static(validator, "_validator", None), property)
        for validator in validators
    )
    if not (calls_hook and sets_attributes and has_validators):
        raise RuntimeError(
            "Connexion's request body validators no longer validate through `_validate` and the "
            "attributes kindling/web/overrides/body_validators.py relies on; adapt that module to this Connexion"
        )
    parameter_init = inspect.getsource(parameters.__init__)
    parameters_as_used = (
        "self.validate_request(request)" in inspect.getsource(parameters.validate)
        and all(f"self.{name} =" in parameter_init for name in ("parameters", "strict_validation", "security_query_params"))
        and callable(getattr(parameters, "validate_query_parameter_list", None))
    )
    if not parameters_as_used:
        raise RuntimeError(
            "Connexion's parameter validator no longer validates through `validate_request` and the "
            "attributes kindling/web/overrides/body_validators.py relies on; adapt that module to this Connexion"
        )


check_connexion()


def _filling_defaults(validator_class):
    """`validator_class`, also setting each absent property that has a default in the schema
    (jsonschema's documented recipe; Connexion's own defaults validator fails on a body that
    is not an object)."""
    check_properties = validator_class.VALIDATORS["properties"]

    def properties(validator, properties, instance, schema):
        if validator.is_type(instance, "object"):
            for name, subschema in properties.items():
                if "default" in subschema:
                    instance.setdefault(name, subschema["default"])
        yield from check_properties(validator, properties, instance, schema)

    return validators.extend(validator_class, {"properties": properties})


_DefaultsValidator = _filling_defaults(Draft4RequestValidator)


class StructuredJSONBodyValidator(JSONRequestBodyValidator):
    """Also fills in the spec's defaults, passing the completed body on, so handlers never
    repeat them."""

    MUTABLE_VALIDATION = True

    def _validate(self, body: t.Any) -> dict | None:
        if not self._nullable and body is None:
            raise refused([field_error("body", "", "must not be empty")])
        validator = _DefaultsValidator(self._schema, format_checker=Draft4Validator.FORMAT_CHECKER)
        errors = schema_errors("body", validator.iter_errors(body))
        if errors:
            raise refused(errors)
        return body


class _StructuredFormMixin:
    def _validate(self, body: t.Any) -> dict | None:
        if not isinstance(body, dict):
            raise refused([field_error("body", "", "must be a form")])
        if self._strict_validation:
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


class StructuredParameterValidator(ParameterValidator):
    """Checks every query, path and header parameter and reports all that fail (the API takes
    no cookie parameter: its session cookie is a security scheme)."""

    def validate(self, scope) -> None:
        # An operation without parameters, asked without a query, has nothing to look at.
        if scope.get("query_string") or any(self.parameters.values()):
            super().validate(scope)

    def validate_request(self, request) -> None:
        errors = []
        if self.strict_validation:
            extra = self.validate_query_parameter_list(request, security_params=self.security_query_params)
            errors += [field_error("query", quoted(name), "is not a parameter of this operation") for name in sorted(extra)]
        sources = {
            "query": request.query_params,
            "path": request.path_params,
            "header": request.headers,
        }
        for location, values in sources.items():
            for param in self.parameters.get(location, []):
                name = param["name"]
                value = values.get(name.replace("-", "_") if location == "path" else name)
                errors += _parameter_errors(location, name, value, param)
        if errors:
            raise refused(errors)


def _parameter_errors(location: str, name: str, value, param: dict) -> list[dict]:
    if is_nullable(param) and is_null(value):
        return []
    if value is None:
        return [field_error(location, name, "is required")] if param.get("required") else []
    schema = param.get("schema", param)
    validator = Draft4Validator(schema, format_checker=Draft4Validator.FORMAT_CHECKER)
    return schema_errors(location, validator.iter_errors(value), prefix=(name,))


def validator_map(multipart: type[MultiPartFormDataValidator] = StructuredMultiPartValidator) -> dict:
    """Connexion's `validator_map` with the structured validators."""
    return {
        "parameter": StructuredParameterValidator,
        "body": MediaTypeDict(
            {
                **VALIDATOR_MAP["body"],
                "*/*json": StructuredJSONBodyValidator,
                "application/x-www-form-urlencoded": StructuredFormDataValidator,
                "multipart/form-data": multipart,
            }
        ),
    }
