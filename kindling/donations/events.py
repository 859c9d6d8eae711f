"""The evidence events of donations and giving programs and requests, and the shape of each
one's data (docs/decisions.md §14): money in minor units of `currency`."""

from __future__ import annotations

from typing import NotRequired, TypedDict

from kindling.evidence.log import event_type


class DonationRecorded(TypedDict):
    amount: int
    currency: str
    status: str
    createdAt: str


class DonationStatusSet(TypedDict):
    status: str
    previousStatus: str
    amount: int
    currency: str
    providerEventId: str
    providerEventType: str


class GivingProgramSet(TypedDict):
    version: int
    kind: str
    active: bool
    approval: str
    periodStartMonth: int
    perPersonCap: int
    budget: int | None
    # A donation match's rules.
    ratioPercent: NotRequired[int | None]
    minimumGift: NotRequired[int | None]
    maximumMatchPerGift: NotRequired[int | None]
    # A volunteer grant's rules.
    ratePerHour: NotRequired[int | None]
    minimumHours: NotRequired[float | None]
    currency: str


# A gift converted into the program's currency at the ECB's quotes of its day.
Conversion = TypedDict(
    "Conversion",
    # The rates as the ECB publishes them (decimal text), and the digest of the rate table they come from.
    {"from": str, "to": str, "fromRate": str, "toRate": str, "rateDate": str, "ratesDigest": str | None},
)


class GivingRequested(TypedDict):
    programId: str
    programVersion: int
    kind: str
    status: str
    reason: str | None
    computedAmount: int
    amount: int
    capped: bool
    currency: str
    createdAt: str
    # A match's: the gift it matches, at the program's ratio, and its conversion when in another currency.
    donationId: NotRequired[str]
    ratioPercent: NotRequired[int | None]
    giftAmount: NotRequired[int | None]
    conversion: NotRequired[Conversion]
    # A grant's: the verified check-ins it claims, at the program's rate.
    checkInIds: NotRequired[list[str]]
    ratePerHour: NotRequired[int | None]
    hours: NotRequired[float | None]


class GivingDecided(TypedDict):
    decision: str
    status: str
    amount: int
    currency: str


class GivingPaid(TypedDict):
    amount: int
    currency: str


class GivingReversed(TypedDict):
    previousStatus: str
    amount: int
    currency: str
    # Paid money to recover from the charity.
    clawback: bool
    donationId: str


DONATION_RECORDED = event_type("donation.recorded", DonationRecorded)
DONATION_STATUS_SET = event_type("donation.status_set", DonationStatusSet)
GIVING_PROGRAM_SET = event_type("giving.program_set", GivingProgramSet)
GIVING_REQUESTED = event_type("giving.requested", GivingRequested)
GIVING_DECIDED = event_type("giving.decided", GivingDecided)
GIVING_PAID = event_type("giving.paid", GivingPaid)
GIVING_REVERSED = event_type("giving.reversed", GivingReversed)
