"""Giving programs, made through the service as an admin would make them."""

from __future__ import annotations

from sqlalchemy.orm import Session

from kindling.donations import programs
from kindling.donations.models import GivingProgram
from tests.factories.accounts import Account
from tests.factories.principals import principal


class Giving:
    """Methods of `make` (`tests.factories.Factories`)."""

    db: Session

    def match_program(
        self, admin: Account, *, ratio_percent: int = 100, per_person_cap: int = 100_000, **fields
    ) -> GivingProgram:
        """A 1:1 matching-gift program of the admin's organization, approved at once unless told otherwise."""
        fields.setdefault("approval", "auto")
        return programs.create_program(
            self.db,
            caller=principal(admin),
            name="Gift match",
            kind=programs.DONATION_MATCH,
            ratio_percent=ratio_percent,
            per_person_cap=per_person_cap,
            **fields,
        )

    def grant_program(
        self, admin: Account, *, rate_per_hour: int = 1000, per_person_cap: int = 100_000, **fields
    ) -> GivingProgram:
        """A volunteer-grant program of the admin's organization ($10 an hour), approved at once unless told otherwise."""
        fields.setdefault("approval", "auto")
        return programs.create_program(
            self.db,
            caller=principal(admin),
            name="Dollars for doers",
            kind=programs.VOLUNTEER_GRANT,
            rate_per_hour=rate_per_hour,
            per_person_cap=per_person_cap,
            **fields,
        )
