"""A person's check-ins and the check-ins they approved: their copy, and the erasure of where they
were and what they wrote (docs/decisions.md §15). Distances, verdicts and hours stay."""

from __future__ import annotations

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from kindling.volunteering.models import CheckIn, VolunteerOpportunity


def export(db: Session, *, user_id: str) -> dict:
    """The person's check-ins, and the approvals they gave, oldest first."""
    return {
        "checkIns": [
            {
                "id": check_in.id,
                "opportunityId": check_in.opportunity_id,
                "checkedInAt": check_in.checked_in_at,
                "latitude": check_in.latitude,
                "longitude": check_in.longitude,
                "accuracyMeters": check_in.accuracy_meters,
                "distanceMeters": check_in.distance_meters,
                "verified": check_in.verified,
                "hours": check_in.hours,
            }
            for check_in in db.scalars(
                select(CheckIn).where(CheckIn.user_id == user_id).order_by(CheckIn.checked_in_at)
            )
        ],
        "checkInApprovals": [
            {"checkInId": check_in.id, "approvedAt": check_in.approved_at, "note": check_in.approval_note}
            for check_in in db.scalars(
                select(CheckIn).where(CheckIn.approved_by == user_id).order_by(CheckIn.approved_at)
            )
        ],
    }


def erase(db: Session, *, user_id: str) -> None:
    """The notes of the approvals the person gave, and their check-ins' coordinates."""
    db.execute(update(CheckIn).where(CheckIn.approved_by == user_id).values(approval_note=None))
    # Where they were is theirs; the opportunity's centre stands in, and the stored distance and verdict stay.
    centre = select(VolunteerOpportunity).where(VolunteerOpportunity.id == CheckIn.opportunity_id)
    db.execute(
        update(CheckIn)
        .where(CheckIn.user_id == user_id)
        .values(
            latitude=centre.with_only_columns(VolunteerOpportunity.latitude).scalar_subquery(),
            longitude=centre.with_only_columns(VolunteerOpportunity.longitude).scalar_subquery(),
            accuracy_meters=None,
        )
        .execution_options(synchronize_session=False)
    )
