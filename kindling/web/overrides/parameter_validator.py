"""Connexion's parameter validator, reporting every fault of the query, path and headers field
by field.

It overrides the public `validate_request` and reads the attributes `ParameterValidator.__init__`
sets (`parameters`, `strict_validation`, `security_query_params`). What it gains is correctness:
Connexion's own answers with the first fault, submitted value included.
`tests/web/test_overrides.py` fails if Connexion stops calling `validate_request` or setting
those attributes.
"""

from __future__ import annotations

from collections.abc import Mapping

from connexion.lifecycle import ConnexionRequest
from connexion.utils import is_null, is_nullable
from connexion.validators import ParameterValidator
from jsonschema import Draft4Validator

from kindling.errors import field_error, quoted, refused
from kindling.web.refusals import schema_errors


class StructuredParameterValidator(ParameterValidator):
    """Checks every query, path and header parameter and reports all that fail (the API takes
    no cookie parameter: its session cookie is a security scheme)."""

    def validate_request(self, request: ConnexionRequest) -> None:
        errors = []
        # A source is parsed only when there is something in it to check: most requests carry no
        # query string, and most operations declare no header parameter.
        if self.strict_validation and request.scope.get("query_string"):
            extra = self.validate_query_parameter_list(request, security_params=self.security_query_params)
            errors += [
                field_error("query", quoted(name), "is not a parameter of this operation") for name in sorted(extra)
            ]
        for location in ("query", "path", "header"):
            declared = self.parameters.get(location)
            if not declared:
                continue
            values = _source(request, location)
            for param in declared:
                name = param["name"]
                value = values.get(name.replace("-", "_") if location == "path" else name)
                errors += _parameter_errors(location, name, value, param)
        if errors:
            raise refused(errors)


def _source(request: ConnexionRequest, location: str) -> Mapping[str, object]:
    if location == "query":
        return request.query_params
    if location == "path":
        return request.path_params
    return request.headers


def _parameter_errors(location: str, name: str, value: object, param: dict) -> list[dict]:
    if is_nullable(param) and is_null(value):
        return []
    if value is None:
        return [field_error(location, name, "is required")] if param.get("required") else []
    schema = param.get("schema", param)
    validator = Draft4Validator(schema, format_checker=Draft4Validator.FORMAT_CHECKER)
    return schema_errors(location, validator.iter_errors(value), prefix=(name,))
