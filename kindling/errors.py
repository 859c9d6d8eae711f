"""Errors a client can act on, raised anywhere below the web edge (kindling.web.errors answers them)."""

from __future__ import annotations


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
