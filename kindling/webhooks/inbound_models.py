"""Deliveries from the payment and identity providers that were acted on, so a replay is not."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from kindling.platform.base import Base, new_id, utcnow


class InboundWebhookEvent(Base):
    __tablename__ = "inbound_webhook_events"
    __table_args__ = (UniqueConstraint("provider", "event_id"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    provider: Mapped[str] = mapped_column(String(16))  # "payments" or "identity"
    # The provider's event id (Stripe `evt_…`) or delivery id (`svix-id`).
    event_id: Mapped[str] = mapped_column(String(255))
    event_type: Mapped[str] = mapped_column(String(100))
    received_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
