"""Installing the Slack app for an organization through Slack's OAuth v2, and removing it (docs/decisions.md §17).

One Slack team belongs to one organization and an organization has one team. The state an admin's
install carries is kept in the database, so any server process can finish an install another began.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
import typing
import urllib.parse

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from kindling.accounts import secrets_box
from kindling.accounts.models import User
from kindling.config import Settings
from kindling.errors import BadRequest, Conflict, NotFound, ServiceUnavailable
from kindling.platform.access import Principal
from kindling.platform.base import new_id, utcnow
from kindling.platform.database import changed_rows
from kindling.slack import web_api
from kindling.slack.models import SlackInstallation, SlackInstallState

STATE_LIFETIME = dt.timedelta(minutes=10)
SCOPES = ("commands", "chat:write", "users:read", "users:read.email")


def _hash(state: str) -> str:
    return hashlib.sha256(state.encode()).hexdigest()


def require_configured(settings: Settings) -> None:
    """503 `slack_not_configured` unless the Slack app's settings are all there."""
    if not (settings.slack_client_id and settings.slack_client_secret and settings.slack_signing_secret):
        raise ServiceUnavailable("The Slack app is not configured on this server", code="slack_not_configured")
    if not settings.secret_key:
        raise ServiceUnavailable(
            "SECRET_KEY is not set: Slack bot tokens are sealed under it", code="secret_key_missing"
        )


def authorize_url(base_url: str) -> str:
    """Slack's OAuth v2 authorize page, beside its Web API (`https://slack.com/api/` → `https://slack.com/oauth/v2/authorize`)."""
    return urllib.parse.urljoin(base_url, "../oauth/v2/authorize")


def start_install(db: Session, *, caller: Principal, settings: Settings, redirect_uri: str) -> str:
    """Begin an install for the caller's organization; the Slack URL to send the admin to."""
    require_configured(settings)
    now = utcnow()
    db.execute(delete(SlackInstallState).where(SlackInstallState.expires_at <= now))
    state = secrets.token_urlsafe(32)
    db.add(
        SlackInstallState(
            state_hash=_hash(state),
            organization_id=caller.member_of,
            user_id=caller.user_id,
            expires_at=now + STATE_LIFETIME,
        )
    )
    db.flush()
    query = urllib.parse.urlencode(
        {
            "client_id": settings.slack_client_id,
            "scope": ",".join(SCOPES),
            "state": state,
            "redirect_uri": redirect_uri,
        }
    )
    return f"{authorize_url(settings.slack_api_base_url)}?{query}"


def consume_state(db: Session, *, state: str) -> SlackInstallState:
    """The install `state` began, removed so that it is used once; 400 `slack_state_invalid` when
    unknown, used or older than 10 minutes."""
    pending = db.get(SlackInstallState, _hash(state), with_for_update=True)
    if pending is None or pending.expires_at <= utcnow():
        raise BadRequest("The install state is unknown, used or expired; install again", code="slack_state_invalid")
    db.delete(pending)
    db.flush()
    return pending


def finish_install(
    db: Session, *, pending: SlackInstallState, code: str, settings: Settings, redirect_uri: str
) -> SlackInstallation:
    """Exchange Slack's code for the bot token and keep it, sealed, for `pending`'s organization."""
    require_configured(settings)
    admin = db.get(User, pending.user_id)
    if admin is None or not admin.active or admin.role != "admin" or admin.organization_id != pending.organization_id:
        raise BadRequest("The admin who began this install can no longer finish it", code="slack_state_invalid")
    web = web_api.client(settings.slack_api_base_url, timeout=web_api.IN_REQUEST_SECONDS)
    try:
        answer = web_api.call(
            web,
            "oauth_v2_access",
            client_id=settings.slack_client_id,
            client_secret=settings.slack_client_secret,
            code=code,
            redirect_uri=redirect_uri,
        )
    except web_api.SlackUnavailable as exc:
        if exc.error in ("invalid_code", "code_already_used", "bad_redirect_uri", "invalid_grant_type"):
            raise BadRequest(f"Slack refused the install: {exc.error}", code="slack_oauth_failed") from None
        raise ServiceUnavailable(f"Slack could not be reached: {exc.error}", code="slack_unavailable") from None
    team = answer.get("team") or {}
    token, team_id = answer.get("access_token"), team.get("id")
    if answer.get("token_type") != "bot" or not isinstance(token, str) or not isinstance(team_id, str):
        raise ServiceUnavailable("Slack's answer carries no bot token for a team", code="slack_unavailable")
    return _keep(db, pending=pending, answer=answer, team_id=team_id, token=token, secret_key=settings.secret_key or "")


def _keep(
    db: Session, *, pending: SlackInstallState, answer: dict, team_id: str, token: str, secret_key: str
) -> SlackInstallation:
    by_team = db.scalar(select(SlackInstallation).where(SlackInstallation.team_id == team_id).with_for_update())
    if by_team is not None and by_team.organization_id != pending.organization_id:
        raise Conflict("This Slack workspace is installed for another organization", code="slack_team_taken")
    mine = db.scalar(
        select(SlackInstallation).where(SlackInstallation.organization_id == pending.organization_id).with_for_update()
    )
    if mine is not None and mine.team_id != team_id:
        raise Conflict(
            "This organization has another Slack workspace installed; uninstall it first",
            code="slack_already_installed",
        )
    installation = mine or SlackInstallation(id=new_id(), organization_id=pending.organization_id, team_id=team_id)
    now = utcnow()
    installation.team_name = str((answer.get("team") or {}).get("name") or "")[:200] or None
    installation.app_id = _short(answer.get("app_id"))
    installation.bot_user_id = _short(answer.get("bot_user_id"))
    installation.scopes = str(answer.get("scope") or "")[:500]
    installation.bot_token_encrypted = secrets_box.seal(
        secret_key, token, context=installation.id, purpose=secrets_box.SLACK_BOT_TOKEN
    )
    installation.installed_by = pending.user_id
    installation.installed_at = now
    installation.updated_at = now
    if mine is None:
        db.add(installation)
    db.flush()
    return installation


def _short(value: object) -> str | None:
    return value[:32] if isinstance(value, str) and value else None


def get_installation(db: Session, *, organization_id: str) -> SlackInstallation:
    """The organization's installation; 404 `slack_not_installed` without one."""
    installation = db.scalar(select(SlackInstallation).where(SlackInstallation.organization_id == organization_id))
    if installation is None:
        raise NotFound("Slack is not installed for this organization", code="slack_not_installed")
    return installation


def uninstall(db: Session, *, organization_id: str) -> None:
    """Forget the organization's installation and its bot token; 404 without one."""
    db.delete(get_installation(db, organization_id=organization_id))
    db.flush()


def installation_of_team(db: Session, team_id: object) -> SlackInstallation | None:
    """The installation of the Slack team `team_id`, if Kindling has one."""
    if not isinstance(team_id, str) or not team_id:
        return None
    return db.scalar(select(SlackInstallation).where(SlackInstallation.team_id == team_id))


def remove_team(db: Session, *, team_id: str) -> bool:
    """Forget the team's installation (Slack said the app was uninstalled or its token revoked)."""
    return changed_rows(db, delete(SlackInstallation).where(SlackInstallation.team_id == team_id)) > 0


def bot_token(installation: SlackInstallation, secret_key: str) -> str:
    """The installation's bot token, unsealed."""
    return secrets_box.open_sealed(
        secret_key, installation.bot_token_encrypted, context=installation.id, purpose=secrets_box.SLACK_BOT_TOKEN
    )


def refused_at_slack(error: str | None) -> typing.NoReturn:
    """The admin declined the install at Slack (or Slack refused it): 400 `slack_install_refused`."""
    reason = error if error in ("access_denied", "invalid_scope", "invalid_team_for_non_distributed_app") else None
    raise BadRequest(
        "The install was not completed at Slack" + (f": {reason}" if reason else ""), code="slack_install_refused"
    )
