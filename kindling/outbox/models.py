"""The outbound webhooks' tables: consultants' endpoints and the event types they take, the outbox's events, and each event's delivery to each endpoint."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import JSON, Boolean, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from kindling.platform.base import Base, new_id, utcnow


class WebhookEndpoint(Base):
    __tablename__ = "webhook_endpoints"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    consultant_id: Mapped[str] = mapped_column(ForeignKey("users.id"), index=True)
    url: Mapped[str] = mapped_column(String(2048))
    description: Mapped[str | None] = mapped_column(String(500))
    events: Mapped[list[str]] = mapped_column(JSON)
    # Kept recoverable because every delivery is signed with it; never shown after creation or rotation.
    secret: Mapped[str] = mapped_column(String(64))
    previous_secret: Mapped[str | None] = mapped_column(String(64))
    previous_secret_expires_at: Mapped[dt.datetime | None]
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    disabled_at: Mapped[dt.datetime | None]
    # The first failed attempt since the last successful one.
    failing_since: Mapped[dt.datetime | None]
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


class WebhookEvent(Base):
    """One outbox row, written in the transaction of the change it reports."""

    __tablename__ = "webhook_events"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    consultant_id: Mapped[str] = mapped_column(ForeignKey("users.id"))
    type: Mapped[str] = mapped_column(String(40))
    # The exact JSON body, so that every attempt sends identical bytes.
    body: Mapped[str] = mapped_column(Text)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


class WebhookDelivery(Base):
    """One event on its way to one endpoint."""

    __tablename__ = "webhook_deliveries"
    __table_args__ = (
        UniqueConstraint("endpoint_id", "event_id"),
        Index("ix_webhook_deliveries_due", "status", "next_attempt_at"),
        Index("ix_webhook_deliveries_endpoint_created", "endpoint_id", "created_at"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    endpoint_id: Mapped[str] = mapped_column(ForeignKey("webhook_endpoints.id", ondelete="CASCADE"))
    event_id: Mapped[str] = mapped_column(ForeignKey("webhook_events.id", ondelete="CASCADE"), index=True)
    status: Mapped[str] = mapped_column(String(16), default="pending")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[dt.datetime | None]
    # A worker that claimed the delivery owns it until then; after that it counts as crashed.
    locked_until: Mapped[dt.datetime | None]
    claim_token: Mapped[str | None] = mapped_column(String(36))
    last_attempt_at: Mapped[dt.datetime | None]
    last_response_code: Mapped[int | None] = mapped_column(Integer)
    last_error: Mapped[str | None] = mapped_column(String(200))
    delivered_at: Mapped[dt.datetime | None]
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
