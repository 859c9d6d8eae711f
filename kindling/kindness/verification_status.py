"""Where an act's verification stands: its status and who must act next, from its decisions.

A level counts only once its evidence is on record (docs/decisions.md §6): the act's verified
level is the highest level with a confirmation or approval, 1 without any (self-reporting needs
no evidence). Levels are independent: an approval of level 4 counts without a decision on 2 or 3.
The recipient's dispute outweighs every approval while it stands: the act counts as level 1 until
an admin's level-4 decision, which resolves it (an approval counts again; a rejection upholds it).
The rules live in `kindling.evidence.replay`, which the evidence log's replay and the offline
verifier use too, so the tables and the log derive a level alike.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session as DbSession

from kindling.accounts.models import User
from kindling.evidence import replay
from kindling.kindness.models import KindnessAct
from kindling.kindness.verification_models import VerificationDecision
from kindling.platform.access import canonical_id

AWAITING = {2: "recipient", 3: "manager", 4: "admin", 5: "external"}


def state(
    *, requested: int, verified: int, decisions: dict[int, str], recipient_is_member: bool
) -> tuple[str, str | None]:
    """(status, awaiting) of an act that asks for `requested` and has `verified` on record."""
    status = replay.verification_status(requested=requested, verified=verified, decisions=decisions)
    if status == "disputed" and requested > 2 and replay.dispute_stands(decisions):
        # Only an admin's level-4 decision (HR looked into it) moves a disputed act on.
        return status, "admin"
    if status in ("verified", "rejected") or requested in decisions:
        # Verified, or refused: nobody is asked any more.
        return status, None
    return status, "external" if requested == 2 and not recipient_is_member else AWAITING[requested]


def recipient_is_member(db: DbSession, *, organization_id: str, recipient_id: str) -> bool:
    """Whether the recipient is a user of the organization, who can confirm level 2 themselves."""
    return (
        db.scalar(select(User.id).where(User.id == canonical_id(recipient_id), User.organization_id == organization_id))
        is not None
    )


def decisions_of(db: DbSession, act_id: str) -> dict[int, str]:
    """The act's decisions, by level."""
    rows = db.execute(
        select(VerificationDecision.level, VerificationDecision.decision).where(VerificationDecision.act_id == act_id)
    )
    return {level: decision for level, decision in rows}  # noqa: C416 (a Result has keys(), so dict() would read it as a mapping)


def refresh(db: DbSession, act: KindnessAct, decisions: dict[int, str] | None = None) -> None:
    """Set the act's status and awaiting party from its requested level, verified level and decisions."""
    if decisions is None:
        decisions = decisions_of(db, act.id) if act.verification_level > 1 else {}
    member = act.verification_level == 2 and recipient_is_member(
        db, organization_id=act.organization_id, recipient_id=act.recipient_id
    )
    act.verification_status, act.verification_awaiting = state(
        requested=act.verification_level, verified=act.verified_level, decisions=decisions, recipient_is_member=member
    )
