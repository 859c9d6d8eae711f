"""Calls to Slack's Web API through `slack_sdk.WebClient`, each bounded in time, their failures as one error.

SLACK_API_BASE_URL is the operator's setting, not a tenant's, so it is not held to the outbound
destination rules that webhook endpoints and OpenID providers are (docs/decisions.md §17): it
may point at loopback (a fake Slack in tests, a relay in a closed network), and must use https
in production (kindling/config.py). The `response_url` a request carries is another matter: it
arrives in the request's body, so it goes out through `kindling.platform.destinations`.
"""

from __future__ import annotations

import logging

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError

log = logging.getLogger(__name__)

# Within a request Slack waits 3 s for (views.open: its trigger_id lasts 3 s too); in the worker, longer.
IN_REQUEST_SECONDS = 2
IN_WORKER_SECONDS = 10


class SlackUnavailable(Exception):
    """Slack refused a call (its `error`) or did not answer in time."""

    def __init__(self, method: str, error: str) -> None:
        super().__init__(f"{method}: {error}")
        self.method = method
        self.error = error


def client(base_url: str, *, token: str | None = None, timeout: int = IN_WORKER_SECONDS) -> WebClient:
    """A Web API client of `base_url`; no retries of its own, since the caller's time is bounded."""
    return WebClient(token=token, base_url=base_url, timeout=timeout, retry_handlers=[])


def call(web: WebClient, method: str, **arguments: object) -> dict:
    """`web.<method>(**arguments)`'s answer; SlackUnavailable when Slack says no or is not reached."""
    try:
        response = getattr(web, method)(**arguments)
    except SlackApiError as exc:
        error = exc.response.get("error") if isinstance(exc.response.data, dict) else None
        raise SlackUnavailable(method, str(error or f"HTTP {exc.response.status_code}")) from None
    except (SlackClientError, OSError, ValueError) as exc:  # unreachable, timed out, not JSON
        raise SlackUnavailable(method, type(exc).__name__) from None
    return dict(response.data) if isinstance(response.data, dict) else {}
