"""Signed checkpoints of each organization's chain, kept by witnesses (docs/evidence.md, "Checkpoints").

A checkpoint is the signed statement `{organizationId, seq, hash, at}`: Kindling makes one at
every export and, while a log grows, at most once an hour, lists them, and sends each to the
webhook endpoints of the organization's consultants that subscribe to `evidence.checkpoint`. Anyone
holding an older checkpoint catches a log that was later shortened or rewritten.
"""

from __future__ import annotations

import datetime as dt
import logging
import time

import sqlalchemy as sa
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from kindling.evidence.chain import ALGORITHM, checkpoint_statement, timestamp
from kindling.evidence.keys import Signer
from kindling.evidence.models import EvidenceCheckpoint, EvidenceEvent, EvidenceHead
from kindling.platform.base import utcnow
from kindling.platform.pagination import page
from kindling.webhooks import outbox

log = logging.getLogger(__name__)

EVERY = dt.timedelta(hours=1)
# The consulting slice lies above this one: its relationships are named here, not imported.
_relationships = sa.table(
    "client_relationships", sa.column("consultant_id"), sa.column("organization_id"), sa.column("status")
)


def document(checkpoint: EvidenceCheckpoint) -> dict:
    """A checkpoint as it is listed, sent to witnesses and given to `kindling evidence verify --checkpoint`."""
    return {
        "organizationId": checkpoint.organization_id,
        "seq": checkpoint.seq,
        "hash": checkpoint.hash,
        "at": timestamp(checkpoint.at),
        "signature": {"keyId": checkpoint.key_id, "algorithm": ALGORITHM, "value": checkpoint.signature},
    }


def record(
    db: Session, signer: Signer, *, organization_id: str, head: dict, now: dt.datetime | None = None
) -> EvidenceCheckpoint:
    """A signed checkpoint of the organization's chain at `head` (the latest one when it already says so),
    sent to the witnesses in the caller's transaction."""
    latest = _latest(db, organization_id)
    if latest is not None and (latest.seq, latest.hash) == (head["seq"], head["hash"]):
        return latest
    at = now or utcnow()
    statement = {"organizationId": organization_id, "seq": head["seq"], "hash": head["hash"], "at": timestamp(at)}
    checkpoint = EvidenceCheckpoint(
        organization_id=organization_id,
        seq=head["seq"],
        hash=head["hash"],
        at=at,
        key_id=signer.key_id,
        signature=signer.sign(checkpoint_statement(statement)),
    )
    db.add(checkpoint)
    db.flush()
    consultants = db.scalars(
        select(_relationships.c.consultant_id).where(
            _relationships.c.organization_id == organization_id, _relationships.c.status == "active"
        )
    ).all()
    for consultant_id in consultants:
        outbox.emit(db, consultant_id=consultant_id, type=outbox.EVIDENCE_CHECKPOINT, data=document(checkpoint))
    return checkpoint


def record_due(db: Session, signer: Signer, *, now: dt.datetime | None = None) -> int:
    """Checkpoint every organization whose log grew since its last checkpoint, made over an hour ago
    (or never); how many were made."""
    now = now or utcnow()
    latest = (
        select(
            EvidenceCheckpoint.organization_id,
            func.max(EvidenceCheckpoint.seq).label("seq"),
            func.max(EvidenceCheckpoint.at).label("at"),
        )
        .group_by(EvidenceCheckpoint.organization_id)
        .subquery()
    )
    due = (
        db.execute(
            select(EvidenceHead.organization_id)
            .outerjoin(latest, latest.c.organization_id == EvidenceHead.organization_id)
            .where(
                EvidenceHead.seq > 0,
                sa.or_(latest.c.seq.is_(None), sa.and_(EvidenceHead.seq > latest.c.seq, latest.c.at <= now - EVERY)),
            )
        )
        .scalars()
        .all()
    )
    for organization_id in due:
        # The last event itself, never the head row alone.
        last = db.execute(
            select(EvidenceEvent.seq, EvidenceEvent.hash)
            .where(EvidenceEvent.organization_id == organization_id)
            .order_by(EvidenceEvent.seq.desc())
            .limit(1)
        ).one()
        record(db, signer, organization_id=organization_id, head={"seq": last.seq, "hash": last.hash}, now=now)
    return len(due)


def list_checkpoints(
    db: Session, *, organization_id: str, limit: int = 100, cursor: str | None = None
) -> tuple[list[dict], str | None]:
    """The organization's checkpoints, newest first, one page at a time."""
    statement = select(EvidenceCheckpoint).where(EvidenceCheckpoint.organization_id == organization_id)
    rows, next_cursor = page(
        db, statement, timestamp=EvidenceCheckpoint.at, record_id=EvidenceCheckpoint.id, limit=limit, cursor=cursor
    )
    return [document(row) for row in rows], next_cursor


def _latest(db: Session, organization_id: str) -> EvidenceCheckpoint | None:
    return db.scalar(
        select(EvidenceCheckpoint)
        .where(EvidenceCheckpoint.organization_id == organization_id)
        .order_by(EvidenceCheckpoint.seq.desc(), EvidenceCheckpoint.at.desc())
        .limit(1)
    )


class Checkpointer:
    """The hourly checkpoints, made by whichever process runs the webhook worker: one round a minute at most."""

    def __init__(self, session_factory: sessionmaker[Session], signer: Signer, *, every_seconds: float = 60.0) -> None:
        self.session_factory = session_factory
        self.signer = signer
        self.every_seconds = every_seconds
        self._next = 0.0

    def __call__(self) -> None:
        if time.monotonic() < self._next:
            return
        self._next = time.monotonic() + self.every_seconds
        try:
            with self.session_factory.begin() as db:
                record_due(db, self.signer)
        except Exception as exc:  # a database outage must not end the worker
            log.warning("evidence checkpoints failed: %s: %s", type(exc).__name__, exc)
