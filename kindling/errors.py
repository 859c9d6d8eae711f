"""Errors a client can act on, raised anywhere below the web edge (kindling.web.errors answers them)."""

from __future__ import annotations

import typing as t

# Property names and choices are quoted at most this long, a whole field or message at most
# MAX_TEXT, and at most MAX_ERRORS faults are listed: an error body stays well under 8 KB.
MAX_QUOTED = 60
MAX_TEXT = 200
MAX_ERRORS = 15


class ApiError(Exception):
    """An error a client can act on; subclasses fix the status and code."""

    status = 500
    # None only for a status a framework chose that has no code of ours (kindling.web.errors).
    code: str | None = "internal_error"

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


class UriTooLong(ApiError):
    status, code = 414, "uri_too_long"


class HeadersTooLarge(ApiError):
    status, code = 431, "request_header_fields_too_large"


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


def quoted(text: object, limit: int = MAX_QUOTED) -> str:
    text = str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def dotted(path: t.Iterable) -> str:
    return quoted(".".join(quoted(part) for part in path), MAX_TEXT)


def field_error(location: str, field: str, message: str) -> dict:
    """One fault of a refused request: where (`body`, `query`, `path`, `header`), which field
    (a dotted path) and what to fix; never the submitted value."""
    return {"location": location, "field": quoted(field, MAX_TEXT), "message": quoted(message, MAX_TEXT)}


def refused(errors: list[dict], *, code: str | None = None) -> BadRequest:
    """The 400 for these field errors; its message names the first."""
    errors = errors[:MAX_ERRORS]
    first = errors[0]
    if first["field"]:
        message = f"{first['field']}: {first['message']}"
    else:
        message = f"The request {first['location']} {first['message']}"
    return BadRequest(message, code=code, details={"errors": errors})


def invalid(location: str, field: str, message: str, *, code: str | None = None) -> BadRequest:
    """The 400 for one field."""
    return refused([field_error(location, field, message)], code=code)


def unsupported_media_type(message: str) -> UnsupportedMediaType:
    """The 415, naming the `Content-Type` header as a refusal names a field."""
    return UnsupportedMediaType(
        f"Content-Type: {message}", details={"errors": [field_error("header", "Content-Type", message)]}
    )
