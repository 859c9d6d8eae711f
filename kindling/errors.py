"""Domain errors and the one error envelope every failure is answered with."""

from __future__ import annotations

import json
import logging

from connexion.exceptions import ProblemException
from connexion.lifecycle import ConnexionRequest, ConnexionResponse
from sqlalchemy.exc import DBAPIError, TimeoutError as PoolTimeout
from starlette.exceptions import HTTPException

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
    415: "unsupported_media_type",
    429: "rate_limited",
    500: "internal_error",
    503: "service_unavailable",
}


class ApiError(Exception):
    """An error a client can act on; subclasses fix the status and code."""

    status = 500
    code = "internal_error"

    def __init__(self, message: str, *, code: str | None = None, details: dict | None = None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.details = details
        self.extra: dict = {}
        self.headers: dict = {}


class BadRequest(ApiError):
    status, code = 400, "validation_error"


class Unauthenticated(ApiError):
    status, code = 401, "unauthenticated"


class Forbidden(ApiError):
    status, code = 403, "forbidden"


class NotFound(ApiError):
    status, code = 404, "not_found"


class Conflict(ApiError):
    status, code = 409, "conflict"


class PayloadTooLarge(ApiError):
    status, code = 413, "payload_too_large"


class UnsupportedMediaType(ApiError):
    status, code = 415, "unsupported_media_type"


class RateLimited(ApiError):
    status, code = 429, "rate_limited"

    def __init__(self, message: str, *, retry_after: int):
        super().__init__(message)
        self.extra = {"retryAfter": retry_after}
        self.headers = {"Retry-After": str(retry_after)}


class ServiceUnavailable(ApiError):
    status, code = 503, "service_unavailable"


def envelope(message: str, *, code: str | None = None, details: dict | None = None, **extra) -> dict:
    """The body of every error response: `{error, code?, details?}`."""
    body = {"error": message}
    if code:
        body["code"] = code
    if details:
        body["details"] = details
    body.update(extra)
    return body


def error_response(status: int, body: dict, headers: dict | None = None) -> ConnexionResponse:
    return ConnexionResponse(
        status_code=status,
        mimetype="application/json",
        content_type="application/json",
        body=json.dumps(body),
        headers=headers or {},
    )


def api_error(_request: ConnexionRequest, exc: ApiError) -> ConnexionResponse:
    body = envelope(exc.message, code=exc.code, details=exc.details, **exc.extra)
    return error_response(exc.status, body, exc.headers)


def problem(_request: ConnexionRequest, exc: ProblemException) -> ConnexionResponse:
    """Connexion's own validation and security failures, in our envelope."""
    status = exc.status or 500
    message = exc.detail or exc.title or "Request failed"
    if status >= 500:
        log.error("connexion problem %s: %s", status, message)
        message = "Internal server error"
    return error_response(status, envelope(message, code=CODES_BY_STATUS.get(status)), exc.headers)


def http_exception(_request: ConnexionRequest, exc: HTTPException) -> ConnexionResponse:
    """Routing errors (unknown path, wrong method) and Flask aborts."""
    status = exc.status_code
    messages = {404: "No such endpoint", 405: "Method not allowed on this endpoint"}
    message = messages.get(status) or (exc.detail if isinstance(exc.detail, str) else "Request failed")
    return error_response(status, envelope(message, code=CODES_BY_STATUS.get(status)), dict(exc.headers or {}))


def database_unavailable(_request: ConnexionRequest, exc: Exception) -> ConnexionResponse:
    """A database that cannot be reached is an outage, not a bug."""
    if isinstance(exc, DBAPIError) and not exc.connection_invalidated and not _is_connect_error(exc):
        return unhandled(_request, exc)
    log.warning("database unavailable: %s", exc.__class__.__name__)
    return error_response(503, envelope("The database is unavailable; try again shortly", code="service_unavailable"), {"Retry-After": "5"})


def _is_connect_error(exc: DBAPIError) -> bool:
    name = type(exc.orig).__name__ if exc.orig is not None else ""
    return name in ("OperationalError", "InterfaceError") and "locked" not in str(exc.orig)


def undecodable(_request: ConnexionRequest, _exc: UnicodeDecodeError) -> ConnexionResponse:
    """A body that is not UTF-8 is bad input, whichever layer tried to decode it."""
    return error_response(400, envelope("The request body is not valid UTF-8", code="validation_error"))


def unhandled(_request: ConnexionRequest, exc: Exception) -> ConnexionResponse:
    log.error("unhandled error", exc_info=exc)
    return error_response(500, envelope("Internal server error", code="internal_error"))


def register(app) -> None:
    """Route every kind of failure to the envelope."""
    app.add_error_handler(ApiError, api_error)
    app.add_error_handler(ProblemException, problem)
    app.add_error_handler(HTTPException, http_exception)
    app.add_error_handler(DBAPIError, database_unavailable)
    app.add_error_handler(PoolTimeout, database_unavailable)
    app.add_error_handler(UnicodeDecodeError, undecodable)
    app.add_error_handler(Exception, unhandled)
