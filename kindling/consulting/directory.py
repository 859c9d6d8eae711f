"""Finding organizations, for consultants looking for clients."""

from __future__ import annotations

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session as DbSession

from kindling.accounts.models import Organization

SEARCH_LIMIT = 20


def search(db: DbSession, *, query: str) -> tuple[str, list[Organization]]:
    """The trimmed query and up to 20 organizations whose name or slug contains it, by name."""
    query = query.strip()
    # autoescape makes % and _ in the query match themselves rather than act as wildcards.
    matches = or_(
        Organization.name.icontains(query, autoescape=True), Organization.slug.icontains(query, autoescape=True)
    )
    organizations = db.scalars(
        select(Organization).where(matches).order_by(func.lower(Organization.name), Organization.id).limit(SEARCH_LIMIT)
    )
    return query, list(organizations)
