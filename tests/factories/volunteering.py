"""Volunteer opportunities and positions at known distances from them."""

from __future__ import annotations

import datetime as dt
import itertools
import math

from sqlalchemy.orm import Session

from kindling.platform.base import utcnow
from kindling.volunteering import service as volunteering
from kindling.volunteering.models import CheckIn, VolunteerOpportunity
from tests.factories.accounts import Account
from tests.factories.principals import principal

CENTRE = (51.5007, -0.1246)
_sequence = itertools.count(1)


class Volunteering:
    """Methods of `make` (`tests.factories.Factories`)."""

    db: Session

    def opportunity(
        self,
        admin: Account,
        *,
        starts_at: dt.datetime | None = None,
        ends_at: dt.datetime | None = None,
        radius_meters: int = 200,
        location: tuple[float, float] = CENTRE,
    ) -> VolunteerOpportunity:
        """An opportunity of the admin's organization, open for check-in now unless told otherwise."""
        starts_at = starts_at or utcnow() - dt.timedelta(minutes=10)
        ends_at = ends_at or starts_at + dt.timedelta(hours=2)
        return volunteering.create_opportunity(
            self.db,
            organization_id=admin.organization_id,
            created_by=admin.user.id,
            title=f"Beach clean-up {next(_sequence)}",
            starts_at=starts_at,
            ends_at=ends_at,
            latitude=location[0],
            longitude=location[1],
            radius_meters=radius_meters,
        )

    def check_in(
        self,
        account: Account,
        opportunity: VolunteerOpportunity,
        location: tuple[float, float] = CENTRE,
        *,
        now: dt.datetime | None = None,
    ) -> CheckIn:
        """`account` checking in at `opportunity` from `location` at `now`, verified only when close enough."""
        return volunteering.check_in(
            self.db,
            caller=principal(account),
            opportunity_id=opportunity.id,
            latitude=location[0],
            longitude=location[1],
            now=now,
        )

    def volunteered(
        self, account: Account, opportunity: VolunteerOpportunity, location: tuple[float, float] = CENTRE
    ) -> CheckIn:
        """`account` there for the whole of `opportunity`: checked in at its start, out at its end."""
        self.check_in(account, opportunity, location, now=opportunity.starts_at)
        return self.check_out(account, opportunity, now=opportunity.ends_at)

    def check_out(
        self, account: Account, opportunity: VolunteerOpportunity, *, now: dt.datetime | None = None
    ) -> CheckIn:
        """`account` checking out of `opportunity` at `now`."""
        return volunteering.check_out(self.db, caller=principal(account), opportunity_id=opportunity.id, now=now)


def north_of(point: tuple[float, float], meters: float) -> tuple[float, float]:
    """The point `meters` due north along the meridian (where haversine is exact)."""
    latitude, longitude = point
    return latitude + math.degrees(meters / volunteering.EARTH_RADIUS_METERS), longitude
