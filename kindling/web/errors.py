"""The one error envelope every failure is answered with, from a handler or from the frameworks.

Under /scim/v2 the same failures are answered with the SCIM error body of RFC 7644 §3.12
(`{schemas, status, scimType?, detail}`, `application/scim+json`), as identity providers expect.
"""

from __future__ import annotations

import json
import logging

from connexion.exceptions import BadRequestProblem, ProblemException, UnsupportedMediaTypeProblem
from scim2_models import SCIMException
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from starlette.exceptions import HTTPException
from starlette.types import Scope, Send

from kindling.accounts.scim import SCIM_MEDIA_TYPE, SCIM_PREFIX
from kindling.errors import ApiError, ServiceUnavailable, field_error, refused
from kindling.web.operations import Operations
from kindling.web.overrides import problem_text

log = logging.getLogger(__name__)

CODES_BY_STATUS = {
    400: "validation_error",
    401: "unauthenticated",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    409: "conflict",
    413: "payload_too_large",
    414: "uri_too_long",
    415: "unsupported_media_type",
    429: "rate_limited",
    431: "request_header_fields_too_large",
    500: "internal_error",
    503: "service_unavailable",
}
# How much of a SCIM error's detail is repeated.
MAX_SCIM_DETAIL = 400


def envelope(error: ApiError) -> bytes:
    """The body of every error response, `{error, code?, details?}` and the error's extra
    members, encoded: the one place it is built."""
    body: dict = {"error": error.message}
    if error.code:
        body["code"] = error.code
    if error.details:
        body["details"] = error.details
    body.update(error.extra)
    return json.dumps(body).encode()


SCIM_ERROR_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:Error"
# RFC 7644 Table 9; Kindling's own 400s map to the nearest keyword (scim_envelope).
SCIM_TYPES = frozenset(
    {
        "invalidFilter",
        "tooMany",
        "uniqueness",
        "mutability",
        "invalidSyntax",
        "invalidPath",
        "noTarget",
        "invalidValue",
        "invalidVers",
        "sensitive",
    }
)


def is_scim(scope: Scope) -> bool:
    path = scope.get("path", "")
    return path == SCIM_PREFIX or path.startswith(SCIM_PREFIX + "/")


def scim_envelope(error: ApiError) -> bytes:
    """The SCIM error body of an error: its sentence as `detail`, its code as `scimType` when it
    is one; a refused filter is `invalidFilter`, a body that is no JSON object `invalidSyntax`,
    any other 400 `invalidValue`."""
    code = error.code
    faults = (error.details or {}).get("errors", [])
    if error.status == 400 and any(fault.get("field") == "filter" for fault in faults):
        code = "invalidFilter"
    elif error.status == 400 and any(fault.get("location") == "body" and not fault.get("field") for fault in faults):
        code = "invalidSyntax"
    scim_type = code if code in SCIM_TYPES else ("invalidValue" if error.status == 400 else None)
    body = {"schemas": [SCIM_ERROR_SCHEMA], "status": str(error.status), "detail": error.message}
    if scim_type:
        body["scimType"] = scim_type
    return json.dumps(body).encode()


async def send_error(scope: Scope, send: Send, error: ApiError) -> None:
    """Answer `error`: the one way every failure leaves, the envelope (under /scim/v2 the SCIM
    error body) with the error's headers."""
    scim = is_scim(scope)
    body = scim_envelope(error) if scim else envelope(error)
    headers = [
        (b"content-type", SCIM_MEDIA_TYPE.encode() if scim else b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    headers += [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in error.headers.items()]
    await send({"type": "http.response.start", "status": error.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def error_for(exc: Exception, scope: Scope, operations: Operations) -> ApiError:
    """The ApiError a failure is answered with, whichever layer raised it: Kindling's own, the
    SCIM services' scim2-models errors, Connexion's problems, the router's and Flask's HTTP
    errors, an unreachable database, an undecodable body; anything else is a 500, logged."""
    if isinstance(exc, ApiError):
        return exc
    if isinstance(exc, SCIMException):
        # Raised by the SCIM services; their detail repeats no secret.
        error = with_status(exc.status, exc.detail[:MAX_SCIM_DETAIL])
        error.code = exc.scim_type or None
        return error
    if isinstance(exc, ProblemException):
        return _problem(exc, scope)
    if isinstance(exc, HTTPException):
        return _http_error(exc, scope, operations)
    if isinstance(exc, (DBAPIError, PoolTimeout)) and _is_outage(exc):
        log.warning("database unavailable: %s", exc.__class__.__name__)
        return database_unavailable_error()
    if isinstance(exc, UnicodeDecodeError):
        # A body that is not UTF-8 is bad input, whichever layer tried to decode it.
        return refused([field_error("body", "", "is not valid UTF-8")])
    log.error("unhandled error", exc_info=exc)
    return ApiError("Internal server error")


def database_unavailable_error() -> ServiceUnavailable:
    error = ServiceUnavailable("The database is unavailable; try again shortly")
    error.headers = {"Retry-After": "5"}
    return error


def with_status(status: int, message: str, headers: dict | None = None) -> ApiError:
    """An ApiError for a status a framework chose, with the code that status stands for."""
    error = ApiError(message)
    error.status, error.code = status, CODES_BY_STATUS.get(status)
    error.headers = headers or {}
    return error


def _problem(exc: ProblemException, scope: Scope) -> ApiError:
    """Connexion's own validation and security failures."""
    if isinstance(exc, BadRequestProblem):
        return problem_text.bad_request(exc, scim=is_scim(scope))
    if isinstance(exc, UnsupportedMediaTypeProblem):
        return problem_text.media_type_refused(exc)
    status = exc.status or 500
    message = exc.detail or exc.title or "Request failed"
    if status >= 500:
        log.error("connexion problem %s: %s", status, message)
        message = "Internal server error"
    return with_status(status, message, exc.headers)


def _http_error(exc: HTTPException, scope: Scope, operations: Operations) -> ApiError:
    """Routing errors (unknown path, wrong method) and Flask's aborts. Connexion routes each
    operation alone, so Starlette's 405 names one operation's methods: Allow lists the path's."""
    status = exc.status_code
    messages = {404: "No such endpoint", 405: "Method not allowed on this endpoint"}
    message = messages.get(status) or (exc.detail if isinstance(exc.detail, str) else "Request failed")
    headers = dict(exc.headers or {})
    if status == 405:
        headers["Allow"] = ", ".join(sorted(operations.methods_of(scope["path"])))
    return with_status(status, message, headers)


def _is_outage(exc: DBAPIError | PoolTimeout) -> bool:
    """A database that cannot be reached is an outage, not a bug."""
    if not isinstance(exc, DBAPIError) or exc.connection_invalidated:
        return True
    name = type(exc.orig).__name__ if exc.orig is not None else ""
    return name in ("OperationalError", "InterfaceError") and "locked" not in str(exc.orig)
