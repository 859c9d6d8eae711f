"""Kindling's refusals for the 400s and 415s Connexion raises itself, read from their text.

Besides its validators (kindling.web.overrides.body_validators raises those), Connexion refuses
a body that is not JSON, or no body where one is required, with a `BadRequestProblem`, and a
Content-Type an operation does not take with an `UnsupportedMediaTypeProblem`; each carries its
facts only in its sentence: the JSON decoder's error, or "Invalid Content-type (…), expected
[…]". These read those sentences and word the refusal field by field, repeating nothing the
client sent: the decoder names a position, never content, and of the 415's sentence only the
operation's media types, which come from the spec, are kept. Nothing of Connexion is replaced,
but its wording is not promised: `tests/web/test_overrides.py` fails if it changes.
"""

from __future__ import annotations

import ast

from connexion.exceptions import BadRequestProblem, UnsupportedMediaTypeProblem

from kindling.errors import ApiError, field_error, quoted, refused, unsupported_media_type

# How much of a framework's message about a refused body is repeated.
MAX_DETAIL = 200


def bad_request(exc: BadRequestProblem, *, scim: bool = False) -> ApiError:
    detail = str(exc.detail or exc.title or "")
    if detail.startswith(("Expecting", "Extra data", "Unterminated", "Invalid", "Unexpected")):
        message = "is not valid JSON: " + detail[:MAX_DETAIL]
    elif "required" in detail.lower():
        message = "is required"
    else:
        message = "is malformed"
    # Under /scim/v2 a body that cannot be read is `invalidSyntax` (RFC 7644 §3.12).
    return refused([field_error("body", "", message)], code="invalidSyntax" if scim else None)


def media_type_refused(exc: UnsupportedMediaTypeProblem) -> ApiError:
    _, found, accepted = str(exc.detail or "").rpartition("), expected ")
    try:
        types = ast.literal_eval(accepted) if found else []
    except (ValueError, SyntaxError):
        types = []
    names = ", ".join(quoted(name) for name in types if isinstance(name, str))
    return unsupported_media_type("must be one of: " + names if names else "is not accepted by this operation")
