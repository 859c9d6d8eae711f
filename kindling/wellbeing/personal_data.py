"""A person's wellbeing answers: their copy, and their deletion (docs/decisions.md §15). Published
figures stay as published: they hold no answer of anyone's."""

from __future__ import annotations

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from kindling.wellbeing.models import WellbeingResponse
from kindling.wellbeing.service import response_body


def export(db: Session, *, user_id: str) -> dict:
    """The person's answers, oldest first."""
    return {
        "wellbeingResponses": [
            response_body(response)
            for response in db.scalars(
                select(WellbeingResponse)
                .where(WellbeingResponse.user_id == user_id)
                .order_by(WellbeingResponse.created_at)
            )
        ]
    }


def erase(db: Session, *, user_id: str) -> None:
    """Delete the person's answers."""
    db.execute(delete(WellbeingResponse).where(WellbeingResponse.user_id == user_id))
