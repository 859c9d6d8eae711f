"""Signed checkpoints of each organization's log (docs/evidence.md, "Checkpoints").

A checkpoint is a C2SP signed note of the log's RFC 9162 tree (origin, size, root) and, beside
it, the signed statement `{organizationId, seq, hash, at}` of the chain. Kindling makes one at
every export and, while a log grows, within a minute of the first event none covers; it lists
them, and sends each to the webhook endpoints of the organization's consultants that subscribe to
`evidence.checkpoint`. It never signs one that does not extend the last, recomputed from the
stored events: a log shortened or rewritten since is refused, and raises `evidence.fork_detected`.
"""

from __future__ import annotations

import base64
import datetime as dt
import logging
import time
from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from kindling import outbox
from kindling.errors import Conflict
from kindling.evidence import notes, tree, witnesses
from kindling.evidence.chain import ALGORITHM, GENESIS_HASH, checkpoint_statement, timestamp
from kindling.evidence.keys import Signer
from kindling.evidence.models import EvidenceCheckpoint, EvidenceCosignature, EvidenceEvent, EvidenceHead
from kindling.platform.base import utcnow
from kindling.platform.pagination import page

log = logging.getLogger(__name__)

# The consulting slice lies above this one: its relationships are named here, not imported.
_relationships = sa.table(
    "client_relationships", sa.column("consultant_id"), sa.column("organization_id"), sa.column("status")
)


def document(checkpoint: EvidenceCheckpoint, cosigned: Sequence[EvidenceCosignature] = ()) -> dict:
    """A checkpoint as it is listed and sent to consultants: its note (null for those made before
    notes) with the witnesses' cosignature lines after the log's, the tree it signs and the chain's
    head, with the JSON form's signature."""
    note = checkpoint.note + "".join(row.line + "\n" for row in cosigned) if checkpoint.note else None
    return {
        "organizationId": checkpoint.organization_id,
        "seq": checkpoint.seq,
        "hash": checkpoint.hash,
        "at": timestamp(checkpoint.at),
        "signature": {"keyId": checkpoint.key_id, "algorithm": ALGORITHM, "value": checkpoint.signature},
        "note": note,
        "treeSize": checkpoint.seq,
        "rootHash": checkpoint.root_hash,
        "cosignatures": [{"name": row.name, "line": row.line} for row in cosigned],
    }


class ForkDetected(Conflict):
    """The log does not extend a checkpoint Kindling signed: 409 `evidence_inconsistent`."""

    def __init__(self, checkpoint: EvidenceCheckpoint, tree_size: int) -> None:
        self.checkpoint, self.tree_size = checkpoint, tree_size
        super().__init__(
            f"The evidence log does not extend its checkpoint of {checkpoint.seq} events: "
            "it was shortened or rewritten since (see GET /api/evidence/verify)",
            code="evidence_inconsistent",
            details={"firstInconsistentCheckpoint": inconsistent(checkpoint), "treeSize": tree_size},
        )


def inconsistent(checkpoint: EvidenceCheckpoint) -> dict:
    return {"treeSize": checkpoint.seq, "rootHash": checkpoint.root_hash, "at": timestamp(checkpoint.at)}


def record(
    db: Session,
    signer: Signer,
    *,
    organization_id: str,
    head: dict,
    now: dt.datetime | None = None,
    rebuilt: tree.Recomputed | None = None,
) -> EvidenceCheckpoint:
    """A signed checkpoint of the organization's log at `head` (the latest one when it already says
    so), sent to the consultants' webhook endpoints in the caller's transaction.

    The tree is rebuilt from the stored events, not taken from the node table: ForkDetected when
    it does not extend the last checkpoint, or the node table disagrees with the events.
    `rebuilt` is that tree when the caller rebuilt it already (verification does), with the
    roots at every checkpoint's size. Refused too while a witness reports a fork."""
    refuse_witnessed_fork(db, organization_id)
    last = latest(db, organization_id)
    if last is not None and (last.seq, last.hash) == (head["seq"], head["hash"]) and last.note:
        return last
    if rebuilt is None or rebuilt.size != head["seq"] or (last is not None and last.seq not in rebuilt.roots):
        rebuilt = tree.from_events(
            db, organization_id=organization_id, up_to=head["seq"], sizes=[last.seq] if last else []
        )
    if last is not None and (
        last.seq > rebuilt.size or base64.b64encode(rebuilt.roots[last.seq]).decode() != last.root_hash
    ):
        raise ForkDetected(last, rebuilt.size)
    if rebuilt.size != head["seq"] or tree.root(db, organization_id=organization_id, size=rebuilt.size) != rebuilt.root:
        raise Conflict(
            "The evidence log's tree does not match its events: see GET /api/evidence/verify",
            code="evidence_inconsistent",
            details={"treeSize": rebuilt.size},
        )
    at = now or utcnow()
    statement = {"organizationId": organization_id, "seq": head["seq"], "hash": head["hash"], "at": timestamp(at)}
    origin = signer.note_origin(organization_id)
    checkpoint = EvidenceCheckpoint(
        organization_id=organization_id,
        seq=head["seq"],
        hash=head["hash"],
        at=at,
        key_id=signer.key_id,
        signature=signer.sign(checkpoint_statement(statement)),
        root_hash=base64.b64encode(rebuilt.root).decode(),
        note=signer.sign_note(notes.checkpoint_text(origin, rebuilt.size, rebuilt.root), origin),
    )
    db.add(checkpoint)
    db.flush()
    emit(db, organization_id, outbox.EVIDENCE_CHECKPOINT, document(checkpoint))
    return checkpoint


def refuse_witnessed_fork(db: Session, organization_id: str) -> None:
    """409 `evidence_inconsistent` while a witness reports that it cosigned a log this one does
    not extend: signing resumes only once an admin removes that witness (docs/evidence.md)."""
    witness = witnesses.forked(db, organization_id=organization_id)
    if witness is not None:
        raise Conflict(
            f"The witness {witness.name} cosigned a log this one does not extend: Kindling signs nothing more "
            "of it (see GET /api/evidence/witnesses)",
            code="evidence_inconsistent",
            details={"witness": {"id": witness.id, "name": witness.name, "size": witness.size}},
        )


def emit(db: Session, organization_id: str, type: str, data: dict) -> None:
    consultants = db.scalars(
        select(_relationships.c.consultant_id).where(
            _relationships.c.organization_id == organization_id, _relationships.c.status == "active"
        )
    ).all()
    for consultant_id in consultants:
        outbox.emit(db, consultant_id=consultant_id, type=type, data=data)


def raise_fork_alarm(db: Session, *, fork: ForkDetected, now: dt.datetime | None = None) -> bool:
    """Mark the checkpoint the log no longer extends and send `evidence.fork_detected`, once per
    checkpoint; whether it was raised now."""
    checkpoint = fork.checkpoint
    if checkpoint.fork_detected_at is not None:
        return False
    checkpoint.fork_detected_at = now or utcnow()
    db.flush()
    log.error(
        "evidence log of organization %s does not extend its checkpoint of %d events",
        checkpoint.organization_id,
        checkpoint.seq,
    )
    emit(
        db,
        checkpoint.organization_id,
        outbox.EVIDENCE_FORK_DETECTED,
        {
            "organizationId": checkpoint.organization_id,
            "checkpoint": document(checkpoint),
            "treeSize": fork.tree_size,
            "detectedAt": timestamp(checkpoint.fork_detected_at),
        },
    )
    return True


def record_due(db: Session, signer: Signer, *, now: dt.datetime | None = None) -> int:
    """Checkpoint every organization whose log grew since its last checkpoint (or has none), and
    check those whose last checkpoint's event is gone or changed; how many were made. A log that
    does not extend its last checkpoint gets none, and raises its fork alarm."""
    now = now or utcnow()
    latest_seq = (
        select(EvidenceCheckpoint.organization_id, func.max(EvidenceCheckpoint.seq).label("seq"))
        .group_by(EvidenceCheckpoint.organization_id)
        .subquery()
    )
    grown = (
        select(EvidenceHead.organization_id)
        .outerjoin(latest_seq, latest_seq.c.organization_id == EvidenceHead.organization_id)
        .where(EvidenceHead.seq > 0, sa.or_(latest_seq.c.seq.is_(None), EvidenceHead.seq > latest_seq.c.seq))
    )
    # The events themselves, never the head row alone: the last checkpoint's event must still be there.
    event = sa.orm.aliased(EvidenceEvent)
    changed = (
        select(EvidenceCheckpoint.organization_id)
        .join(
            latest_seq,
            sa.and_(
                latest_seq.c.organization_id == EvidenceCheckpoint.organization_id,
                latest_seq.c.seq == EvidenceCheckpoint.seq,
            ),
        )
        .outerjoin(
            event,
            sa.and_(event.organization_id == EvidenceCheckpoint.organization_id, event.seq == EvidenceCheckpoint.seq),
        )
        .where(
            EvidenceCheckpoint.seq > 0,
            EvidenceCheckpoint.fork_detected_at.is_(None),
            sa.or_(event.hash.is_(None), event.hash != EvidenceCheckpoint.hash),
        )
    )
    made = 0
    for organization_id in sorted(set(db.scalars(grown).all()) | set(db.scalars(changed).all())):
        last = db.execute(
            select(EvidenceEvent.seq, EvidenceEvent.hash)
            .where(EvidenceEvent.organization_id == organization_id)
            .order_by(EvidenceEvent.seq.desc())
            .limit(1)
        ).one_or_none()
        head = {"seq": last.seq, "hash": last.hash} if last else {"seq": 0, "hash": GENESIS_HASH}
        try:
            record(db, signer, organization_id=organization_id, head=head, now=now)
            made += 1
        except ForkDetected as fork:
            raise_fork_alarm(db, fork=fork, now=now)
        except Conflict as refused:
            log.error("evidence checkpoint of organization %s refused: %s", organization_id, refused.message)
    return made


def list_checkpoints(
    db: Session, *, organization_id: str, limit: int = 100, cursor: str | None = None
) -> tuple[list[dict], str | None]:
    """The organization's checkpoints, newest first, one page at a time."""
    statement = select(EvidenceCheckpoint).where(EvidenceCheckpoint.organization_id == organization_id)
    rows, next_cursor = page(
        db, statement, timestamp=EvidenceCheckpoint.at, record_id=EvidenceCheckpoint.id, limit=limit, cursor=cursor
    )
    cosigned = witnesses.cosignatures_of(db, [row.id for row in rows])
    return [document(row, cosigned.get(row.id, [])) for row in rows], next_cursor


def latest(db: Session, organization_id: str) -> EvidenceCheckpoint | None:
    return db.scalar(
        select(EvidenceCheckpoint)
        .where(EvidenceCheckpoint.organization_id == organization_id)
        .order_by(EvidenceCheckpoint.seq.desc(), EvidenceCheckpoint.at.desc())
        .limit(1)
    )


class Checkpointer:
    """The checkpoints of growing logs, made by whichever process runs the webhook worker: a round
    every 30 s, so that an event waits at most a minute for the first checkpoint that covers it."""

    def __init__(self, session_factory: sessionmaker[Session], signer: Signer, *, every_seconds: float = 30.0) -> None:
        self.session_factory = session_factory
        self.signer = signer
        self.every_seconds = every_seconds
        self._next = 0.0

    def __call__(self) -> bool:
        """Make the checkpoints due, when a round is due; whether it was."""
        if time.monotonic() < self._next:
            return False
        self._next = time.monotonic() + self.every_seconds
        try:
            with self.session_factory.begin() as db:
                record_due(db, self.signer)
        except Exception as exc:  # a database outage must not end the worker
            log.warning("evidence checkpoints failed: %s: %s", type(exc).__name__, exc)
        return True
