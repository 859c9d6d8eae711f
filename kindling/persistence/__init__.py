"""SQLAlchemy models and the database wiring; importing it registers every table."""

from kindling.persistence import (  # noqa: F401
    accounts,
    clients,
    donations,
    inbound_webhooks,
    kindness,
    themes,
    volunteering,
    webhooks,
    wellbeing,
)
from kindling.persistence.base import Base

metadata = Base.metadata
