"""An organization's activity at chosen moments: kindness acts, check-ins, donations, survey answers."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from kindling.donations.models import Donation
from kindling.kindness.models import KindnessAct
from kindling.platform.base import utcnow
from kindling.volunteering.models import CheckIn
from kindling.wellbeing.models import WellbeingResponse
from tests.factories.accounts import Account
from tests.factories.volunteering import CENTRE, north_of

if TYPE_CHECKING:
    from tests.factories import Factories

FAR_AWAY_METERS = 10_000


class Activity:
    """`make.activity`: records dated some days ago, made with the other factories of `make`."""

    def __init__(self, make: Factories) -> None:
        self.make = make
        self.db = make.db

    def act(
        self, sender: Account, *, days_ago: float = 1, level: int = 1, category: str = "peer_recognition"
    ) -> KindnessAct:
        """A kindness act `sender` did `days_ago` days ago, verified at `level`."""
        return self.make.act(sender, at=_ago(days_ago), verified_level=level, category=category)

    def check_in(
        self, member: Account, admin: Account, *, days_ago: float = 1, verified: bool = True, hours: float = 2
    ) -> CheckIn:
        """`member` checks in, at the spot or far from it, to a new `hours`-long opportunity of
        `admin`'s organization, and checks out at its end."""
        moment = _ago(days_ago)
        opportunity = self.make.opportunity(admin, starts_at=moment, ends_at=moment + dt.timedelta(hours=hours))
        position = CENTRE if verified else north_of(CENTRE, FAR_AWAY_METERS)
        self.make.check_in(member, opportunity, position, now=moment)
        return self.make.check_out(member, opportunity, now=opportunity.ends_at)

    def donation(
        self,
        account: Account,
        *,
        days_ago: float = 1,
        amount: int = 2500,
        status: str = "succeeded",
        currency: str = "USD",
    ) -> Donation:
        """A donation made `days_ago` days ago, now in `status`, as the payment provider's events leave it."""
        record = self.make.donation(account, amount=amount, currency=currency, created_at=_ago(days_ago))
        if status != "pending":
            self.make.payment(record, status)
        return record

    def response(self, account: Account, *, days_ago: float = 1, mood: int = 4, stress: int = 2) -> WellbeingResponse:
        """A wellbeing survey answer given `days_ago` days ago."""
        return self.make.response(account, created_at=_ago(days_ago), mood=mood, stress=stress)


def _ago(days: float) -> dt.datetime:
    return utcnow() - dt.timedelta(days=days)
