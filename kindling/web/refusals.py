"""A refused request, field by field: jsonschema's errors as `{location, field, message}`, in
words that repeat nothing the client sent (no value, however long or secret, and no schema)."""

from __future__ import annotations

import collections
import typing as t

from jsonschema import ValidationError

from kindling.errors import dotted, field_error, quoted


def schema_errors(location: str, errors: t.Iterable[ValidationError], prefix: tuple = ()) -> list[dict]:
    """Our field errors for jsonschema's, once each, sorted by field."""
    found: dict[tuple[str, str], dict] = {}
    for error in errors:
        for item in _describe(location, error, prefix):
            found.setdefault((item["field"], item["message"]), item)
    return sorted(found.values(), key=lambda item: item["field"])


def _describe(location: str, error: ValidationError, prefix: tuple) -> list[dict]:
    path = (*prefix, *error.absolute_path)
    kind, expected, instance, schema = str(error.validator), error.validator_value, error.instance, _schema_of(error)
    if kind == "required" and isinstance(expected, list):
        present = instance if isinstance(instance, dict) else {}
        return [field_error(location, dotted((*path, name)), "is required") for name in expected if name not in present]
    if kind == "additionalProperties" and isinstance(instance, dict):
        known = schema.get("properties", {})
        return [
            field_error(location, dotted((*path, name)), "is not allowed") for name in instance if name not in known
        ]
    if kind in ("oneOf", "anyOf") and error.context:
        return _best_branch(location, error, prefix)
    return [field_error(location, dotted(path), _message(kind, expected, schema, error.message))]


def _best_branch(location: str, error: ValidationError, prefix: tuple) -> list[dict]:
    """For a value matching none of several shapes, the errors of the shape it came closest to:
    the branch with the fewest errors, the first of equals."""
    by_branch: dict[str | int, list[ValidationError]] = collections.defaultdict(list)
    for sub in error.context:
        by_branch[sub.schema_path[0]].append(sub)
    closest = min(by_branch, key=lambda branch: (_weight(by_branch[branch]), branch))
    return schema_errors(location, by_branch[closest], prefix)


def _schema_of(error: ValidationError) -> dict:
    """The schema that refused the value; our spec's schemas are all objects, never true/false."""
    return error.schema if isinstance(error.schema, dict) else {}


def _weight(errors: list[ValidationError]) -> int:
    # A disallowed property counts once per property. A value outside a closed set (such as
    # `accountType`) says most plainly that the client meant another shape: it counts double.
    count = 0
    for error in errors:
        if error.validator == "additionalProperties" and isinstance(error.instance, dict):
            count += sum(name not in _schema_of(error).get("properties", {}) for name in error.instance)
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


# `expected` is the value the schema gives the failed keyword: a type name or list of them, a bound, an enum's list…
def _message(kind: str, expected: t.Any, schema: dict, schema_message: str = "") -> str:
    if kind == "type":
        names = expected if isinstance(expected, list) else [expected]
        return "must be " + " or ".join(_TYPE_NAMES.get(name, quoted(name)) for name in names)
    if kind == "minLength":
        return f"must be at least {expected} character{'s' if expected != 1 else ''}"
    if kind == "maxLength":
        return f"must be at most {expected} characters"
    if kind == "minimum":
        return (
            f"must be more than {expected}"
            if schema.get("exclusiveMinimum") is True
            else f"must be at least {expected}"
        )
    if kind == "maximum":
        return (
            f"must be less than {expected}" if schema.get("exclusiveMaximum") is True else f"must be at most {expected}"
        )
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
