"""SQLAlchemy models and the database wiring; importing it registers every table."""

from kindling.persistence import (  # noqa: F401
    accounts,
    clients,
    donations,
    evidence,
    inbound_webhooks,
    kindness,
    outbound_webhooks,
    themes,
    verification,
    volunteering,
    wellbeing,
)
from kindling.persistence.base import Base

metadata = Base.metadata
