"""Requests from Slack: verified over their raw bytes with `slack_sdk`, refused unless from an installed team, acted on once.

Slack signs `v0:{timestamp}:{body}` with HMAC-SHA256 under the app's signing secret; a signature
is good for 5 minutes either side of now. A request whose signature was seen within that window
is a replay: it is answered, and nothing more is recorded.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
from collections.abc import Mapping

from slack_sdk.signature import SignatureVerifier
from sqlalchemy import delete
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from kindling.config import Settings
from kindling.errors import ServiceUnavailable, Unauthenticated
from kindling.platform.base import utcnow
from kindling.slack import installation as installations
from kindling.slack.models import SlackInstallation, SlackRequestSeen

log = logging.getLogger(__name__)

TOLERANCE = dt.timedelta(minutes=5)


def verify(*, settings: Settings, body: bytes, headers: Mapping[str, str]) -> None:
    """401 `invalid_signature` unless Slack signed these exact bytes within the last 5 minutes."""
    if not settings.slack_signing_secret:
        raise ServiceUnavailable("The Slack app is not configured on this server", code="slack_not_configured")
    headers = {name.lower(): value for name, value in headers.items()}
    timestamp, signature = headers.get("x-slack-request-timestamp"), headers.get("x-slack-signature")
    # slack_sdk would take `int()` of any form Python reads as a number (" 12", "١٢"); Slack sends digits.
    if timestamp is None or signature is None or not (timestamp.isascii() and timestamp.isdigit()):
        raise Unauthenticated("The request is not signed by Slack", code="invalid_signature")
    try:
        valid = SignatureVerifier(settings.slack_signing_secret).is_valid(body, timestamp, signature)
    except (UnicodeDecodeError, ValueError):
        valid = False
    if not valid:
        raise Unauthenticated(
            "The request is not signed by Slack, or is older than 5 minutes", code="invalid_signature"
        )


def installation_for(db: Session, team_id: object) -> SlackInstallation:
    """The installation of the team a verified request comes from; 401 `slack_team_unknown` for any other team."""
    installation = installations.installation_of_team(db, team_id)
    if installation is None:
        raise Unauthenticated("The request comes from a Slack workspace not installed here", code="slack_team_unknown")
    return installation


def first_seen(db: Session, *, headers: Mapping[str, str]) -> bool:
    """Record the request's signature; False when it was seen before (a replay)."""
    headers = {name.lower(): value for name, value in headers.items()}
    signature, timestamp = headers["x-slack-signature"], int(headers["x-slack-request-timestamp"])
    # Kept until the signature stops verifying: 5 minutes past the time it was signed at.
    expires_at = dt.datetime.fromtimestamp(timestamp, dt.UTC) + TOLERANCE
    try:
        with db.begin_nested():
            db.add(
                SlackRequestSeen(signature_hash=hashlib.sha256(signature.encode()).hexdigest(), expires_at=expires_at)
            )
    except IntegrityError:  # the primary key, also against a concurrent delivery of the same request
        log.info("Slack request replayed; nothing recorded")
        return False
    return True


def forget_expired(db: Session) -> None:
    """Drop the signatures that can no longer verify: a replay of them is refused as stale anyway."""
    db.execute(delete(SlackRequestSeen).where(SlackRequestSeen.expires_at <= utcnow()))
