"""Deliveries from the payment and identity providers that were acted on, so a replay is not:
a verified event of a type Kindling handles is recorded by its id, so a replay (the same Stripe
event id, the same `svix-id`) is answered 200 and changes nothing."""

from __future__ import annotations

import datetime as dt
import logging
import typing

from sqlalchemy import String, Table, UniqueConstraint
from sqlalchemy.dialects import postgresql, sqlite
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
    # One statement, no savepoint: a concurrent delivery of the same event holds it until that
    # delivery's transaction ends, and it records nothing if that one committed.
    recorded = db.connection().execute(
        _RECORDS[db.get_bind().dialect.name], {"provider": provider, "event_id": event_id, "event_type": event_type}
    )
    if not recorded.rowcount:
        log.info("%s event %s already processed", provider, event_id)
        return False
    return True


_events = typing.cast(Table, InboundWebhookEvent.__table__)
# Built once, as every delivery runs it.
_RECORDS = {
    "postgresql": postgresql.insert(_events).on_conflict_do_nothing(index_elements=["provider", "event_id"]),
    "sqlite": sqlite.insert(_events).on_conflict_do_nothing(index_elements=["provider", "event_id"]),
}
