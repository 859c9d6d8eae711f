"""Deliveries from the payment and identity providers that were acted on, so a replay is not:
a verified event of a type Kindling handles is recorded by its id, so a replay (the same Stripe
event id, the same `svix-id`) is answered 200 and changes nothing."""

from __future__ import annotations

import datetime as dt
import logging

from sqlalchemy import String, UniqueConstraint
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Mapped, Session, mapped_column

from kindling.errors import BadRequest
from kindling.platform.base import Base, new_id, utcnow

log = logging.getLogger(__name__)

PROCESSED, DUPLICATE, IGNORED = "processed", "duplicate", "ignored"


class InboundWebhookEvent(Base):
    __tablename__ = "inbound_webhook_events"
    __table_args__ = (UniqueConstraint("provider", "event_id"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    provider: Mapped[str] = mapped_column(String(16))  # "payments" or "identity"
    # The provider's event id (Stripe `evt_…`) or delivery id (`svix-id`).
    event_id: Mapped[str] = mapped_column(String(255))
    event_type: Mapped[str] = mapped_column(String(100))
    received_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


def first_delivery(db: Session, *, provider: str, event_id: object, event_type: str) -> bool:
    """Record the event; False when it was recorded before (a replay)."""
    if not isinstance(event_id, str) or not 1 <= len(event_id) <= 255:
        raise BadRequest("The event has no usable id", code="invalid_payload")
    try:
        with db.begin_nested():
            db.add(InboundWebhookEvent(provider=provider, event_id=event_id, event_type=event_type))
    except IntegrityError:  # the unique (provider, event_id) pair, also against a concurrent delivery
        log.info("%s event %s already processed", provider, event_id)
        return False
    return True
