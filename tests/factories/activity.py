"""An organization's activity at chosen moments: kindness acts, check-ins, donations, survey answers."""

from __future__ import annotations

import datetime as dt

from sqlalchemy.orm import Session

from kindling.cache import Cache
from kindling.persistence.base import utcnow
from kindling.persistence.donations import Donation
from kindling.persistence.kindness import KindnessAct
from kindling.persistence.volunteering import CheckIn
from kindling.persistence.wellbeing import WellbeingResponse
from kindling.services import volunteering
from tests.factories import Account
from tests.factories import donations, volunteering as opportunities, wellbeing
from tests.factories.kindness import KindnessFactory
from tests.factories.principals import principal

FAR_AWAY_METERS = 10_000


class ActivityFactory:
    def __init__(self, db: Session, cache: Cache) -> None:
        self.db = db
        self.kindness = KindnessFactory(db, cache)

    def act(self, sender: Account, *, days_ago: float = 1, level: int = 1, category: str = "peer_recognition") -> KindnessAct:
        """A kindness act `sender` did `days_ago` days ago."""
        return self.kindness.act(sender, at=_ago(days_ago), verification_level=level, category=category)

    def check_in(
        self, member: Account, admin: Account, *, days_ago: float = 1, verified: bool = True, hours: float = 2
    ) -> CheckIn:
        """`member` checks in, at the spot or far from it, to a new `hours`-long opportunity of `admin`'s organization."""
        moment = _ago(days_ago)
        opportunity = opportunities.opportunity(
            self.db, admin, starts_at=moment, ends_at=moment + dt.timedelta(hours=hours)
        )
        position = opportunities.CENTRE if verified else opportunities.north_of(opportunities.CENTRE, FAR_AWAY_METERS)
        return volunteering.check_in(
            self.db,
            caller=principal(member),
            opportunity_id=opportunity.id,
            latitude=position[0],
            longitude=position[1],
            now=moment,
        )

    def donation(self, account: Account, *, days_ago: float = 1, amount: int = 2500, status: str = "succeeded", currency: str = "USD") -> Donation:
        """A donation made `days_ago` days ago, now in `status` (as the payment webhook leaves it)."""
        record = donations.donation(self.db, account, amount=amount, currency=currency)
        record.created_at = record.updated_at = _ago(days_ago)
        record.status = status
        if status == "succeeded":
            record.succeeded_at = utcnow()
        self.db.flush()
        return record

    def response(self, account: Account, *, days_ago: float = 1, mood: int = 4, stress: int = 2) -> WellbeingResponse:
        """A wellbeing survey answer given `days_ago` days ago."""
        return wellbeing.response(self.db, account, created_at=_ago(days_ago), mood=mood, stress=stress)


def _ago(days: float) -> dt.datetime:
    return utcnow() - dt.timedelta(days=days)
