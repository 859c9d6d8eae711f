"""The evidence log: append in the caller's transaction, page, verify and export (docs/evidence.md)."""

from __future__ import annotations

import base64
import datetime as dt
import typing

from sqlalchemy import Row, Select, Table, bindparam, func, insert, select, update
from sqlalchemy.dialects import sqlite
from sqlalchemy.orm import Session

from kindling.errors import BadRequest, Conflict, invalid
from kindling.evidence import checkpoints, merkle, tree, witnesses, witnessing
from kindling.evidence.chain import (
    ALGORITHM,
    GENESIS_HASH,
    body_hash,
    event_body,
    signed_bytes,
    timestamp,
    unsequenced_body,
)
from kindling.evidence.keys import Signer
from kindling.evidence.models import EvidenceCheckpoint, EvidenceEvent, EvidenceHead, EvidenceTreeNode
from kindling.evidence.reconcile import RECORD_KINDS, reconcile
from kindling.platform import write_behind
from kindling.platform.base import utcnow
from kindling.platform.destinations import DestinationPolicy
from kindling.platform.pagination import decode_seq_cursor, encode_seq_cursor

# Every event type features append, with the TypedDict of its `data`: each feature declares its
# own in its events.py, and openapi.yaml lists them all (EvidenceEventType). `data` holds ids,
# levels, decisions, distances and amounts only: never a name, email, comment or note.
EVENT_TYPES: dict[str, type[typing.Mapping[str, object]]] = {}


def event_type(name: str, shape: type[typing.Mapping[str, object]]) -> str:
    """Register the event type `name`, whose events' data has `shape`; the name, to append with."""
    if name in EVENT_TYPES:
        raise ValueError(f"evidence event type {name!r} is declared twice")
    EVENT_TYPES[name] = shape
    return name


class Imported(typing.TypedDict):
    """A record's facts the log did not hold before, written once by a migration: when it was
    recorded, and its fields as the events of its kind carry them (for a person who had no
    `member.joined`, `role` and `active`)."""

    recordedAt: str


IMPORTED = event_type("imported", Imported)

# A declarative class's table is a Table; SQLAlchemy types `__table__` as any FromClause.
_events = typing.cast(Table, EvidenceEvent.__table__)
_heads = typing.cast(Table, EvidenceHead.__table__)
_nodes = typing.cast(Table, EvidenceTreeNode.__table__)
# Appends run in most writes, so their statements are built once.
_INSERT_EVENTS = insert(_events)
_INSERT_NODES = insert(_nodes)
_HEAD = select(_heads.c.seq, _heads.c.hash, _heads.c.frontier).where(
    _heads.c.organization_id == bindparam("organization")
)
# Migration 0036's function, which sequences an event on PostgreSQL.
_SEQUENCE = select(
    func.evidence_append(
        *(bindparam(name) for name in ("organization", "type", "kind", "subject", "actor")),
        bindparam("data", type_=_events.c.data.type),
        bindparam("occurred", type_=_events.c.occurred_at.type),
        bindparam("before"),
        bindparam("after"),
    )
)
_ADVANCE_HEAD = (
    update(_heads)
    .where(_heads.c.organization_id == bindparam("organization"))
    .values(seq=bindparam("seq"), hash=bindparam("hash"), frontier=bindparam("frontier"))
)
_STREAM_BATCH = 5000
# Seqs one statement scans for the few events of no record (about 0.5 s of PostgreSQL's time on
# a busy machine), so that none outlasts the engine's silence limit however long the log.
_SEQ_WINDOW = 200_000
# A bundle is built and signed whole, in memory: a longer log is exported in excerpts, which
# chain (each one's prevHash is the head hash of the one before).
EXPORT_LIMIT = 100_000
_COLUMNS = tuple(
    _events.c[name]
    for name in (
        "seq",
        "organization_id",
        "type",
        "subject_kind",
        "subject_id",
        "actor_id",
        "data",
        "occurred_at",
        "prev_hash",
        "hash",
    )
)


class Entry(typing.NamedTuple):
    """An event to append: its type, its subject (kind, id), who acted (or None) and its data."""

    type: str
    subject: tuple[str, str]
    actor_id: str | None
    data: typing.Mapping[str, object]


def append(
    db: Session,
    *,
    organization_id: str,
    type: str,
    subject: tuple[str, str],
    actor_id: str | None,
    data: typing.Mapping[str, object],
) -> None:
    """Append an event to the organization's chain in the caller's transaction.

    `subject` is (kind, id), e.g. ("act", act.id). The head row's lock, held until the
    transaction ends, orders concurrent appends, so `seq` has no gaps.
    """
    append_all(db, organization_id=organization_id, entries=[Entry(type, subject, actor_id, data)])


def append_all(db: Session, *, organization_id: str, entries: typing.Sequence[Entry]) -> None:
    """Append events to the organization's chain in this order, in one lock however many there are."""
    for entry in entries:
        if entry.type not in EVENT_TYPES:
            raise ValueError(f"unknown evidence event type {entry.type!r}")
    if not entries:
        return
    occurred_at = utcnow()
    if db.get_bind().dialect.name == "postgresql":
        # The database gives each event its place in the chain and the tree (migration 0036's
        # evidence_append), sent with the transaction's next round trip, at the latest with its
        # COMMIT (kindling/platform/write_behind.py): the head row is locked only while it runs.
        write_behind.send_later(db, _SEQUENCE, [_unsequenced(organization_id, entry, occurred_at) for entry in entries])
        return
    # What evidence_append does, in Python: SQLite's transactions hold its one writer lock from their start.
    size, prev_hash, packed = _head(db, organization_id)
    frontier = tree.frontier(db, organization_id=organization_id, size=size, packed=packed)
    rows, nodes = [], []
    for seq, entry in enumerate(entries, start=size + 1):
        kind, subject_id = entry.subject
        event = event_body(
            seq, organization_id, entry.type, kind, subject_id, entry.actor_id, entry.data, occurred_at, prev_hash
        )
        digest = body_hash(event)
        rows.append(
            {
                "organization_id": organization_id,
                "seq": seq,
                "type": entry.type,
                "subject_kind": kind,
                "subject_id": subject_id,
                "actor_id": entry.actor_id,
                "data": entry.data,
                "occurred_at": occurred_at,
                "prev_hash": prev_hash,
                "hash": digest,
            }
        )
        nodes.extend(tree.grow(frontier, organization_id=organization_id, hash_=digest))
        prev_hash = digest
    db.execute(_INSERT_EVENTS, rows)
    db.execute(_INSERT_NODES, nodes)
    # The one change the head row accepts (on PostgreSQL a trigger refuses any other): an advance
    # over the run of events just appended, with the tree's frontier after them.
    db.execute(
        _ADVANCE_HEAD,
        {"organization": organization_id, "seq": size + len(entries), "hash": prev_hash, "frontier": frontier.packed()},
    )


def _unsequenced(organization_id: str, entry: Entry, occurred_at: dt.datetime) -> dict:
    kind, subject_id = entry.subject
    body = event_body(0, organization_id, entry.type, kind, subject_id, entry.actor_id, entry.data, occurred_at, "")
    before, after = unsequenced_body(body)
    return {
        "organization": organization_id,
        "type": entry.type,
        "kind": kind,
        "subject": subject_id,
        "actor": entry.actor_id,
        "data": entry.data,
        "occurred": occurred_at,
        "before": before,
        "after": after,
    }


def _head(db: Session, organization_id: str) -> Row[int, str, bytes | None]:
    """The head row's seq, hash and packed frontier, made at the genesis if there is none."""
    row = db.execute(_HEAD, {"organization": organization_id}).one_or_none()
    if row is None:
        db.execute(
            sqlite.insert(_heads)
            .values(organization_id=organization_id, seq=0, hash=GENESIS_HASH, frontier=b"")
            .on_conflict_do_nothing()
        )
        row = db.execute(_HEAD, {"organization": organization_id}).one()
    return row


def _range(statement: Select, since: dt.datetime | None, until: dt.datetime | None, location: str) -> Select:
    if since is not None and until is not None and since > until:
        raise invalid(location, "from", "must not be after to")
    if since is not None:
        statement = statement.where(_events.c.occurred_at >= since)
    if until is not None:
        statement = statement.where(_events.c.occurred_at <= until)
    return statement


def list_events(
    db: Session,
    *,
    organization_id: str,
    since: dt.datetime | None = None,
    until: dt.datetime | None = None,
    subject_id: str | None = None,
    type: str | None = None,
    limit: int = 100,
    cursor: str | None = None,
) -> tuple[list[dict], str | None]:
    """A page of the organization's events in seq order, and the cursor of the next page (or None)."""
    statement = _range(select(_events).where(_events.c.organization_id == organization_id), since, until, "query")
    if subject_id is not None:
        statement = statement.where(_events.c.subject_id == subject_id)
    if type is not None:
        statement = statement.where(_events.c.type == type)
    if cursor is not None:
        statement = statement.where(_events.c.seq > decode_seq_cursor(cursor))
    events = list(_stream(db, statement.order_by(_events.c.seq).limit(limit + 1)))
    if len(events) <= limit:
        return events, None
    return events[:limit], encode_seq_cursor(events[limit - 1]["seq"])


def _stream(db: Session, statement: Select) -> typing.Iterator[dict]:
    """The events `statement` selects, as they are hashed and shown, read in batches: memory stays
    flat however long the chain (a server-side cursor on PostgreSQL)."""
    for seq, organization_id, type_, kind, subject_id, actor_id, data, occurred_at, prev_hash, hash_ in db.execute(
        statement.with_only_columns(*_COLUMNS).execution_options(yield_per=_STREAM_BATCH)
    ):
        event = event_body(seq, organization_id, type_, kind, subject_id, actor_id, data, occurred_at, prev_hash)
        event["hash"] = hash_
        yield event


def last_event(db: Session, *, organization_id: str) -> dict:
    """`{seq, hash}` of the organization's last event, read from the events themselves (seq 0 and
    64 zeros before the first): the head row alone is never trusted."""
    row = db.execute(
        select(_events.c.seq, _events.c.hash)
        .where(_events.c.organization_id == organization_id)
        .order_by(_events.c.seq.desc())
        .limit(1)
    ).one_or_none()
    return {"seq": row.seq, "hash": row.hash} if row else {"seq": 0, "hash": GENESIS_HASH}


def verify(db: Session, *, organization_id: str) -> dict:
    """Recompute the organization's chain and reconcile its tables with the state the log implies:
    `{intact, consistent, checkpointsConsistent, events, head, tree, firstBrokenSeq,
    firstInconsistentCheckpoint, mismatches, mismatchCount}`.

    Each event is read once: those of the records' kinds as the records are reconciled, the others
    in seq order, each checked against its hash; the links between events are checked in SQL; the
    tree is rebuilt from the events' hashes in seq order. The chain is broken at the lowest seq
    where anything fails."""
    return _verify(db, organization_id)[0]


def _verify(db: Session, organization_id: str) -> tuple[dict, tree.Recomputed]:
    """`verify`'s answer, and the tree it rebuilt from the events."""
    # The last event first: events appended while the chain is read lie beyond it and are not read.
    current = last_event(db, organization_id=organization_id)
    found = reconcile(db, organization_id=organization_id, up_to=current["seq"])
    others = select(_events).where(
        _events.c.organization_id == organization_id,
        _events.c.seq <= current["seq"],
        _events.c.subject_kind.not_in(RECORD_KINDS),
    )
    # In windows of seqs: the few events of no record lie far apart, and a cursor's scan to the
    # next one would be silent for as long as it takes.
    for after in range(0, current["seq"], _SEQ_WINDOW):
        window = others.where(_events.c.seq > after, _events.c.seq <= after + _SEQ_WINDOW)
        for event in _stream(db, window.order_by(_events.c.seq)):
            found.hashed(event)
    made = db.scalars(
        select(EvidenceCheckpoint)
        .where(EvidenceCheckpoint.organization_id == organization_id)
        .order_by(EvidenceCheckpoint.at, EvidenceCheckpoint.id)
    ).all()
    # One more read of the log, in seq order: its links, and the tree rebuilt from its hashes.
    links = _Links()
    rows = db.execute(
        select(_events.c.seq, _events.c.prev_hash, _events.c.hash)
        .where(_events.c.organization_id == organization_id, _events.c.seq <= current["seq"])
        .order_by(_events.c.seq)
        .execution_options(yield_per=_STREAM_BATCH)
    )
    rebuilt = tree.from_hashes(links.hashes(rows), sizes=[checkpoint.seq for checkpoint in made])
    count = links.count
    faults = [seq for seq in (links.first_unlinked, found.first_unhashed) if seq is not None]
    first_broken = min(faults) if faults else _head_row_fault(db, organization_id, current)
    if first_broken is None and tree.root(db, organization_id=organization_id, size=rebuilt.size) != rebuilt.root:
        first_broken = tree.first_unmatched_leaf(db, organization_id=organization_id, up_to=current["seq"])
    # The first checkpoint, in the order they were made, whose tree the log's is not an extension of.
    forked = next(
        (
            checkpoint
            for checkpoint in made
            if checkpoint.seq not in rebuilt.roots
            or base64.b64encode(rebuilt.roots[checkpoint.seq]).decode() != checkpoint.root_hash
        ),
        None,
    )
    witness_fork = witnesses.forked(db, organization_id=organization_id)
    result = {
        "intact": first_broken is None,
        "consistent": found.count == 0,
        "checkpointsConsistent": forked is None and witness_fork is None,
        "events": count,
        "head": current,
        "tree": {"size": rebuilt.size, "rootHash": base64.b64encode(rebuilt.root).decode()},
        "firstBrokenSeq": first_broken,
        "firstInconsistentCheckpoint": checkpoints.inconsistent(forked) if forked else None,
        "witnessFork": witnesses.fork_document(witness_fork) if witness_fork else None,
        "mismatches": found.mismatches,
        "mismatchCount": found.count,
    }
    return result, rebuilt


class _Links:
    """The chain's links, checked as the log is read in seq order: how many events there are, and
    the lowest seq where they fail (a seq missing, or a prevHash that is not the hash of the event
    before), or None."""

    def __init__(self) -> None:
        self.count = 0
        self.first_unlinked: int | None = None
        self._expected, self._previous = 1, GENESIS_HASH

    def hashes(self, rows: typing.Iterable[Row[int, str, str]]) -> typing.Iterator[bytes]:
        """Each row's stored hash, as the tree's leaves, once its links are checked."""
        for seq, prev_hash, hash_ in rows:
            self.count += 1
            if self.first_unlinked is None:
                if seq != self._expected:
                    # Below 1 is a fault at 1; after a gap, the fault is the first seq missing.
                    self.first_unlinked = max(1, min(seq, self._expected))
                elif prev_hash != self._previous:
                    self.first_unlinked = seq
                self._expected, self._previous = seq + 1, hash_
            try:
                yield bytes.fromhex(hash_)
            except ValueError:  # a stored hash that is not hex: no event's, so the chain breaks here
                self.first_unlinked = min(self.first_unlinked or seq, seq)
                yield bytes(32)


def _head_row_fault(db: Session, organization_id: str, last: dict) -> int | None:
    """Where the head row breaks the chain, if it does: it must point at the last event, or at
    one appended since (its event commits with it)."""
    row = db.execute(
        select(_heads.c.seq, _heads.c.hash).where(_heads.c.organization_id == organization_id)
    ).one_or_none()
    stored = (row.seq, row.hash) if row else (0, GENESIS_HASH)
    if stored[0] < last["seq"] or (stored[0] == last["seq"] and stored[1] != last["hash"]):
        return last["seq"]
    if stored[0] > last["seq"]:
        there = db.scalar(
            select(_events.c.hash).where(_events.c.organization_id == organization_id, _events.c.seq == stored[0])
        )
        if there != stored[1]:
            return last["seq"] + 1
    return None


def checkpointed_head(db: Session, signer: Signer, *, organization_id: str) -> tuple[dict, EvidenceCheckpoint]:
    """The log's last event, as `require_consistent` finds it, and a checkpoint of it, signed with
    the tree verification rebuilt (so the events are read once)."""
    head, rebuilt = _require_consistent(db, organization_id)
    return head, checkpoints.record(db, signer, organization_id=organization_id, head=head, rebuilt=rebuilt)


def require_consistent(db: Session, *, organization_id: str) -> dict:
    """The log's last event, once verify finds the chain and its tree intact, the tables consistent
    with it and every checkpoint extended by it; 409 `evidence_inconsistent` otherwise: Kindling
    never signs what its own log contradicts."""
    return _require_consistent(db, organization_id)[0]


def _require_consistent(db: Session, organization_id: str) -> tuple[dict, tree.Recomputed]:
    result, rebuilt = _verify(db, organization_id)
    if result["witnessFork"] is not None:
        # The witness's own refusal, which names it, rather than the general one below.
        checkpoints.refuse_witnessed_fork(db, organization_id)
    if not (result["intact"] and result["consistent"] and result["checkpointsConsistent"]):
        raise Conflict(
            "The evidence log is broken, the records do not match it, or it does not extend a checkpoint "
            "Kindling signed: see GET /api/evidence/verify",
            code="evidence_inconsistent",
            details={
                "intact": result["intact"],
                "firstBrokenSeq": result["firstBrokenSeq"],
                "mismatchCount": result["mismatchCount"],
                "checkpointsConsistent": result["checkpointsConsistent"],
                "firstInconsistentCheckpoint": result["firstInconsistentCheckpoint"],
            },
        )
    return result["head"], rebuilt


def export(
    db: Session,
    signer: Signer,
    *,
    organization_id: str,
    since: dt.datetime | None = None,
    until: dt.datetime | None = None,
    policy: DestinationPolicy | None = None,
) -> dict:
    """A signed bundle of the organization's events (all, or those in the time range), refused
    while the log is broken or the records contradict it. Its checkpoint carries the witnesses'
    cosignatures that came within 5 s, and says whether they are the quorum (`witnessed`)."""
    current, made = checkpointed_head(db, signer, organization_id=organization_id)
    witnessed = witnessing.cosign_now(db, made, policy or DestinationPolicy())
    in_log = (_events.c.organization_id == organization_id, _events.c.seq <= current["seq"])
    # Every event from the first to the last in the range, so the excerpt is one unbroken piece
    # of the chain even where clocks of several servers let occurredAt step back.
    first, last_seq = db.execute(
        _range(select(func.min(_events.c.seq), func.max(_events.c.seq)).where(*in_log), since, until, "body")
    ).one()
    if first is not None and last_seq - first + 1 > EXPORT_LIMIT:
        count = last_seq - first + 1
        raise BadRequest(
            f"The range holds {count:,} events; a bundle holds at most {EXPORT_LIMIT:,}: "
            "export it in excerpts with from and to",
            code="export_too_large",
            details={"events": count, "limit": EXPORT_LIMIT},
        )
    statement = select(_events).where(*in_log, _events.c.seq.between(first, last_seq)).order_by(_events.c.seq)
    events = list(_stream(db, statement)) if first is not None else []
    if events:
        prev_hash = events[0]["prevHash"]
        last = {"seq": events[-1]["seq"], "hash": events[-1]["hash"]}
    else:
        # An empty range: the bundle stands for the chain as it is, with nothing in between.
        prev_hash, last = current["hash"], current
    bundle = {
        "organizationId": organization_id,
        "prevHash": prev_hash,
        "events": events,
        "head": last,
        "checkpoint": _bundle_checkpoint(db, made, events, last, witnessed),
        "signedAt": timestamp(utcnow()),
    }
    bundle["signature"] = {"keyId": signer.key_id, "algorithm": ALGORITHM, "value": signer.sign(signed_bytes(bundle))}
    return bundle


def _bundle_checkpoint(db: Session, made: EvidenceCheckpoint, events: list[dict], head: dict, witnessed: bool) -> dict:
    """The checkpoint of the log at export, `{note, treeSize, rootHash, witnessed}`, its note with
    the cosignatures; an excerpt adds what ties its events to that tree: `prefix`, the complete
    subtrees over the leaves before its first event, and `proof`, the consistency proof from its
    head's tree to the checkpoint's."""
    note = checkpoints.document(made, witnesses.cosignatures_of(db, [made.id]).get(made.id, []))["note"]
    found: dict[str, typing.Any] = {
        "note": note,
        "treeSize": made.seq,
        "rootHash": made.root_hash,
        "witnessed": witnessed,
    }
    first = events[0]["seq"] if events else head["seq"] + 1
    if first == 1 and head["seq"] == made.seq:
        return found
    read = tree.reader(db, made.organization_id)
    wanted = merkle.frontier_nodes(first - 1)
    prefix = read(wanted)
    found["prefix"] = [base64.b64encode(prefix[node]).decode() for node in wanted]
    found["proof"] = [base64.b64encode(node).decode() for node in merkle.consistency_proof(head["seq"], made.seq, read)]
    return found


def inclusion_proof(db: Session, *, organization_id: str, seq: int, tree_size: int | None) -> dict:
    """The inclusion proof of event `seq` in the organization's tree of `tree_size` leaves (the
    whole log by default); 400 `beyond_the_tree` beyond it."""
    size = last_event(db, organization_id=organization_id)["seq"]
    return tree.inclusion(
        db,
        organization_id=organization_id,
        seq=seq,
        tree_size=size if tree_size is None else tree_size,
        current_size=size,
    )


def consistency_proof(db: Session, *, organization_id: str, old: int, new: int | None) -> dict:
    """The consistency proof from the organization's tree of `old` leaves to that of `new` (the
    whole log by default); 400 `beyond_the_tree` beyond it."""
    size = last_event(db, organization_id=organization_id)["seq"]
    return tree.consistency(
        db, organization_id=organization_id, old=old, new=size if new is None else new, current_size=size
    )


def subject_events(db: Session, *, organization_id: str, subject: tuple[str, str]) -> list[dict]:
    """Every event of the organization about `subject` (kind, id), in seq order."""
    kind, subject_id = subject
    statement = select(_events).where(
        _events.c.organization_id == organization_id,
        _events.c.subject_kind == kind,
        _events.c.subject_id == subject_id,
    )
    return list(_stream(db, statement.order_by(_events.c.seq)))
