"""Receipts: a person's proof of their own act, check-in or donation, checked later offline
(docs/evidence.md, "Receipts").

A receipt is the events about one record, each with its RFC 9162 inclusion proof in the tree of
a signed checkpoint, and that checkpoint. It needs no signature of its own: each event's hash is
its leaf, and the note signs the root the proofs lead to.
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy import select
from sqlalchemy.orm import Session

from kindling.errors import NotFound
from kindling.evidence import checkpoints, tree
from kindling.evidence import log as evidence
from kindling.evidence.keys import Signer
from kindling.evidence.models import EvidenceCheckpoint
from kindling.platform.access import Principal, canonical_id

# The records a receipt is for and the column naming the person each is of. The evidence slice
# lies below the slices that own these tables, so it names them rather than import their models.
_OWNED = {
    kind: sa.table(name, sa.column("id"), sa.column("organization_id"), sa.column("user_id"))
    for kind, name in (("act", "kindness_acts"), ("check_in", "volunteer_check_ins"), ("donation", "donations"))
}


def receipt(db: Session, signer: Signer, *, caller: Principal, kind: str, record_id: str) -> dict:
    """The receipt of the record for its owner, an admin or an auditor of its organization; 404
    for anyone else, exactly as for a record that does not exist."""
    organization_id = caller.member_of
    record_id = canonical_id(record_id)
    records = _OWNED[kind]
    owner = db.scalar(
        select(records.c.user_id).where(records.c.id == record_id, records.c.organization_id == organization_id)
    )
    if owner is None or not (owner == caller.user_id or caller.is_admin or caller.auditor):
        raise NotFound(f"No such {kind.replace('_', '-')} in this organization")
    events = evidence.subject_events(db, organization_id=organization_id, subject=(kind, record_id))
    made = _covering_checkpoint(db, signer, organization_id, last_seq=events[-1]["seq"] if events else 0)
    proofs = [
        tree.inclusion(db, organization_id=organization_id, seq=event["seq"], tree_size=made.seq, current_size=made.seq)
        for event in events
    ]
    listed = checkpoints.document(made)
    return {
        "organizationId": organization_id,
        "subject": {"kind": kind, "id": record_id},
        "events": events,
        "inclusionProofs": proofs,
        "checkpoint": {name: listed[name] for name in ("note", "treeSize", "rootHash", "cosignatures")},
    }


def _covering_checkpoint(db: Session, signer: Signer, organization_id: str, *, last_seq: int) -> EvidenceCheckpoint:
    """The latest checkpoint when it is a note covering seq `last_seq` and no fork was found
    against it; else one made now, as an export makes it (409 `evidence_inconsistent` when the
    log does not extend the last)."""
    latest = db.scalar(
        select(EvidenceCheckpoint)
        .where(EvidenceCheckpoint.organization_id == organization_id)
        .order_by(EvidenceCheckpoint.seq.desc(), EvidenceCheckpoint.at.desc())
        .limit(1)
    )
    if latest is not None and latest.note and latest.seq >= last_seq and latest.fork_detected_at is None:
        return latest
    return evidence.checkpointed_head(db, signer, organization_id=organization_id)[1]
