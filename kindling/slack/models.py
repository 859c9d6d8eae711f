"""Slack installations, the installs under way, requests already seen, acts recorded from Slack and the work left to the worker."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import JSON, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from kindling.platform.base import Base, new_id, utcnow


class SlackInstallation(Base):
    """One Slack workspace (team) installed for one organization, both ways unique."""

    __tablename__ = "slack_installations"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    organization_id: Mapped[str] = mapped_column(ForeignKey("organizations.id"), unique=True)
    team_id: Mapped[str] = mapped_column(String(32), unique=True)
    team_name: Mapped[str | None] = mapped_column(String(200))
    app_id: Mapped[str | None] = mapped_column(String(32))
    bot_user_id: Mapped[str | None] = mapped_column(String(32))
    scopes: Mapped[str] = mapped_column(String(500))
    # The bot token, sealed under SECRET_KEY and bound to the installation's id.
    bot_token_encrypted: Mapped[str] = mapped_column(Text)
    installed_by: Mapped[str] = mapped_column(ForeignKey("users.id"))
    installed_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


class SlackInstallState(Base):
    """An install begun by an admin and not finished yet: single use, 10 minutes."""

    __tablename__ = "slack_install_states"

    # SHA-256 of the `state` sent to Slack; the value itself is not stored.
    state_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    organization_id: Mapped[str] = mapped_column(ForeignKey("organizations.id"), index=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id"))
    expires_at: Mapped[dt.datetime] = mapped_column(index=True)


class SlackRequestSeen(Base):
    """A signed request from Slack already acted on, kept while its signature could still verify."""

    __tablename__ = "slack_requests_seen"

    # SHA-256 of the request's `X-Slack-Signature`.
    signature_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    expires_at: Mapped[dt.datetime] = mapped_column(index=True)


class SlackAct(Base):
    """An act recorded from Slack: whose Slack users sent and received it, and the recipient's message."""

    __tablename__ = "slack_acts"

    act_id: Mapped[str] = mapped_column(ForeignKey("kindness_acts.id"), primary_key=True)
    team_id: Mapped[str] = mapped_column(String(32))
    sender_slack_id: Mapped[str] = mapped_column(String(32))
    # Only this Slack user's click confirms or disputes the act.
    recipient_slack_id: Mapped[str] = mapped_column(String(32))
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


class SlackJob(Base):
    """Work a request from Slack left to the worker (Slack waits 3 s for an answer, no longer)."""

    __tablename__ = "slack_jobs"
    __table_args__ = (Index("ix_slack_jobs_due", "status", "next_attempt_at"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    team_id: Mapped[str] = mapped_column(String(32))
    kind: Mapped[str] = mapped_column(String(32))
    payload: Mapped[dict] = mapped_column(JSON)
    status: Mapped[str] = mapped_column(String(16), default="pending")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    # A worker that claimed the job owns it until then; after that it counts as crashed.
    locked_until: Mapped[dt.datetime | None]
    claim_token: Mapped[str | None] = mapped_column(String(36))
    last_error: Mapped[str | None] = mapped_column(String(200))
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
