"""The evidence log: each organization's hash-chained, append-only events, and the head of its chain."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import JSON, BigInteger, ForeignKey, Index, LargeBinary, SmallInteger, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from kindling.platform.base import Base, new_id


class EvidenceEvent(Base):
    """One event; the service only ever inserts these (on PostgreSQL a trigger refuses the rest)."""

    __tablename__ = "evidence_events"
    __table_args__ = (
        Index("ix_evidence_events_organization_id_occurred_at", "organization_id", "occurred_at", "seq"),
        # A subject's events; verification reads every event this way, its records' batch at a
        # time, and on PostgreSQL finds all of each event in the index, not the table.
        Index(
            "ix_evidence_events_organization_id_subject_id",
            "organization_id",
            "subject_id",
            "seq",
            postgresql_include=["subject_kind", "type", "actor_id", "data", "occurred_at", "prev_hash", "hash"],
        ),
        Index("ix_evidence_events_organization_id_type", "organization_id", "type", "seq"),
    )

    organization_id: Mapped[str] = mapped_column(ForeignKey("organizations.id"), primary_key=True)
    seq: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    type: Mapped[str] = mapped_column(String(64))
    subject_kind: Mapped[str] = mapped_column(String(32))
    subject_id: Mapped[str] = mapped_column(String(64))
    # Null for what no account did: payment provider events and the import of earlier records.
    actor_id: Mapped[str | None] = mapped_column(String(36))
    data: Mapped[dict] = mapped_column(JSON)
    occurred_at: Mapped[dt.datetime]
    prev_hash: Mapped[str] = mapped_column(String(64))
    hash: Mapped[str] = mapped_column(String(64))


class EvidenceHead(Base):
    """The last event of an organization's chain; its row lock makes `seq` gap-free. `frontier`
    packs the hashes of the complete subtrees covering the tree's `seq` leaves, largest first
    (kindling/evidence/merkle.py, Frontier), so that an append need not read them; None where not
    known, and then read from the nodes."""

    __tablename__ = "evidence_heads"

    organization_id: Mapped[str] = mapped_column(ForeignKey("organizations.id"), primary_key=True)
    seq: Mapped[int] = mapped_column(BigInteger)
    hash: Mapped[str] = mapped_column(String(64))
    frontier: Mapped[bytes | None] = mapped_column(LargeBinary)


class EvidenceTreeNode(Base):
    """The hash of one complete subtree of an organization's RFC 9162 tree (kindling/evidence/merkle.py):
    leaves `[position · 2^level, (position + 1) · 2^level)`, leaf `i` being event seq `i + 1`. Written
    once, in the transaction of the event that completes it; on PostgreSQL a trigger refuses the rest."""

    __tablename__ = "evidence_tree_nodes"

    organization_id: Mapped[str] = mapped_column(ForeignKey("organizations.id"), primary_key=True)
    level: Mapped[int] = mapped_column(SmallInteger, primary_key=True, autoincrement=False)
    position: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    hash: Mapped[bytes] = mapped_column(LargeBinary(32))


class EvidenceCheckpoint(Base):
    """A signed statement that an organization's chain had `hash` at `seq`, and its tree of `seq`
    leaves the root `root_hash`: a C2SP signed note (docs/evidence.md)."""

    __tablename__ = "evidence_checkpoints"
    __table_args__ = (Index("ix_evidence_checkpoints_organization_id_at", "organization_id", "at", "id"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    organization_id: Mapped[str] = mapped_column(ForeignKey("organizations.id"))
    seq: Mapped[int] = mapped_column(BigInteger)
    hash: Mapped[str] = mapped_column(String(64))
    at: Mapped[dt.datetime]
    key_id: Mapped[str] = mapped_column(String(16))
    signature: Mapped[str] = mapped_column(String(100))
    root_hash: Mapped[str] = mapped_column(String(44))  # base64, as in the note
    # The signed note: null for the checkpoints made before notes, which only the JSON form signs.
    note: Mapped[str | None] = mapped_column(Text)
    # When the log was first found not to extend this checkpoint (evidence.fork_detected was raised).
    fork_detected_at: Mapped[dt.datetime | None]


class EvidenceWitness(Base):
    """A witness that cosigns the organization's checkpoints (c2sp.org/tlog-witness), added by an
    admin or by a consultant of the organization (`consultant_id`)."""

    __tablename__ = "evidence_witnesses"
    __table_args__ = (Index("ix_evidence_witnesses_organization_id", "organization_id", "created_at"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    organization_id: Mapped[str] = mapped_column(ForeignKey("organizations.id"))
    consultant_id: Mapped[str | None] = mapped_column(String(36))
    name: Mapped[str] = mapped_column(String(100))
    url: Mapped[str] = mapped_column(String(2048))
    verifier_key: Mapped[str] = mapped_column(String(400))
    created_at: Mapped[dt.datetime]
    # The size of the latest checkpoint the witness cosigned for this log, as it last told.
    size: Mapped[int] = mapped_column(BigInteger, default=0)
    last_attempt_at: Mapped[dt.datetime | None]
    # Why the last submission got no cosignature (a status, a timeout, a refused destination).
    last_error: Mapped[str | None] = mapped_column(String(300))
    # When the witness refused a checkpoint inconsistent with what it cosigned: a fork.
    fork_detected_at: Mapped[dt.datetime | None]


class EvidenceCosignature(Base):
    """A witness's verified cosignature of a checkpoint: its signature line and timestamp."""

    __tablename__ = "evidence_cosignatures"

    checkpoint_id: Mapped[str] = mapped_column(ForeignKey("evidence_checkpoints.id"), primary_key=True)
    # Kept when the witness is removed: the cosignature still vouches for the checkpoint.
    witness_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    name: Mapped[str] = mapped_column(String(256))
    line: Mapped[str] = mapped_column(String(512))
    timestamp: Mapped[int] = mapped_column(BigInteger)
    received_at: Mapped[dt.datetime]


class EvidenceWitnessPolicy(Base):
    """How many witnesses' cosignatures make a checkpoint `witnessed` (none set: 1 when any witness is listed)."""

    __tablename__ = "evidence_witness_policies"

    organization_id: Mapped[str] = mapped_column(ForeignKey("organizations.id"), primary_key=True)
    quorum: Mapped[int] = mapped_column(SmallInteger)
