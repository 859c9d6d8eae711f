"""The evidence events of kindness acts and their verification, and the shape of each one's data."""

from __future__ import annotations

from typing import NotRequired, TypedDict

from kindling.evidence.log import event_type


class ActRecorded(TypedDict):
    requestedLevel: int
    category: str
    # Of the description, category and media (kindling/evidence/replay.py): the log never holds the text.
    contentDigest: str
    createdAt: str
    # Named only when not the API (`slack`), so events of acts recorded through the API keep their members.
    source: NotRequired[str]


class ActChanged(TypedDict):
    changed: list[str]
    requestedLevel: int
    category: str
    contentDigest: str


class VerificationDecided(TypedDict):
    level: int
    decision: str
    # Levels 3 and 4: what made the decider one who may give it (`line_manager`, `manager` or `admin`).
    authority: NotRequired[str]


class AttestationAnswered(TypedDict):
    """The attester has no account: the answer is tied to the address it was mailed to by
    `attesterKey`, without naming it, and to the member who asked for it by `requestedBy`."""

    attestationId: str
    level: int
    decision: str
    requestedBy: str
    attesterDomain: str | None
    attesterKey: str | None


ACT_RECORDED = event_type("act.recorded", ActRecorded)
ACT_CHANGED = event_type("act.changed", ActChanged)
VERIFICATION_DECIDED = event_type("verification.decided", VerificationDecided)
ATTESTATION_ANSWERED = event_type("attestation.answered", AttestationAnswered)
