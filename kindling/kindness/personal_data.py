"""The acts a person sent and received and the verification decisions they made: their copy, and
the erasure of what they wrote (docs/decisions.md §15). Ids, levels and counts stay."""

from __future__ import annotations

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from kindling.kindness.models import KindnessAct
from kindling.kindness.verification_models import Attestation, VerificationDecision

ERASED_DESCRIPTION = "Erased"


def export(db: Session, *, user_id: str) -> dict:
    """The acts the person sent and received, and the verification decisions they made, oldest first."""
    acts_sent = db.scalars(select(KindnessAct).where(KindnessAct.user_id == user_id).order_by(KindnessAct.created_at))
    acts_received = db.scalars(
        select(KindnessAct).where(KindnessAct.recipient_id == user_id).order_by(KindnessAct.created_at)
    )
    return {
        "actsSent": [_act(act) for act in acts_sent],
        "actsReceived": [_act(act) for act in acts_received],
        "verificationDecisions": [
            {
                "id": decision.id,
                "actId": decision.act_id,
                "level": decision.level,
                "decision": decision.decision,
                "note": decision.note,
                "reference": decision.reference,
                "decidedAt": decision.decided_at,
            }
            for decision in db.scalars(
                select(VerificationDecision)
                .where(VerificationDecision.decided_by == user_id)
                .order_by(VerificationDecision.decided_at)
            )
        ],
    }


def _act(act: KindnessAct) -> dict:
    return {
        "id": act.id,
        "senderId": act.user_id,
        "recipientId": act.recipient_id,
        "description": act.description,
        "category": act.category,
        "requestedLevel": act.verification_level,
        "verifiedLevel": act.verified_level,
        "media": act.media,
        "createdAt": act.created_at,
    }


def erase(db: Session, *, user_id: str) -> None:
    """The texts and media of the acts the person sent, attesters' statements about them, and the
    notes of the decisions the person made."""
    sent = select(KindnessAct.id).where(KindnessAct.user_id == user_id)
    db.execute(
        update(KindnessAct)
        .where(KindnessAct.user_id == user_id)
        .values(description=ERASED_DESCRIPTION, media=[])
        .execution_options(synchronize_session=False)
    )
    # Attesters' statements describe the act, and so the person.
    db.execute(update(Attestation).where(Attestation.act_id.in_(sent)).values(answer_statement=None))
    db.execute(update(VerificationDecision).where(VerificationDecision.decided_by == user_id).values(note=None))
