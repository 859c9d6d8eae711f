"""The evidence events of volunteer check-ins, and the shape of each one's data."""

from __future__ import annotations

from typing import TypedDict

from kindling.evidence.log import event_type


class CheckInRecorded(TypedDict):
    opportunityId: str
    distanceMeters: float
    # Whether the code shown at the venue was right; None when none was given.
    code: bool | None
    verified: bool
    checkedInAt: str
    startsAt: str
    endsAt: str
    hours: float


class CheckInCheckedOut(TypedDict):
    opportunityId: str
    checkedOutAt: str
    hours: float


class CheckInApproved(TypedDict):
    opportunityId: str
    verified: bool
    hours: float


CHECK_IN_RECORDED = event_type("check_in.recorded", CheckInRecorded)
CHECK_IN_CHECKED_OUT = event_type("check_in.checked_out", CheckInCheckedOut)
CHECK_IN_APPROVED = event_type("check_in.approved", CheckInApproved)
