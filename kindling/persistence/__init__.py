"""SQLAlchemy models and the database wiring; importing it registers every table."""

from kindling.persistence import accounts  # noqa: F401
from kindling.persistence import webhooks  # noqa: F401
from kindling.persistence.base import Base

metadata = Base.metadata
