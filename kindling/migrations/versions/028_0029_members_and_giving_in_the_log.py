"""members and giving requests reconciled with the log

Revision ID: 0029
Revises: 0028
Position: 28 (file names give the run order; revision ids stay as stored, docs/decisions.md §23)

Verification now also reconciles membership and giving requests with the log (docs/evidence.md).
Each person of an organization whose log holds no `member.joined` (everyone who joined before
sign-up, join codes and single sign-on logged it) gets one `imported` member fact: when the
account was made, its role, and whether it is active. Each giving request whose
`giving.requested` event predates its `createdAt` gets one `imported` event with its creation
time. Both are chained after the organization's last event, oldest record first, and added to
its Merkle tree (`evidence_tree_nodes`, made by 0025) as the log adds every event. Giving
requests get the index reconciliation reads them by.

The hash and tree rules are copied here as they stand at this revision, so the events written now keep
their hashes whatever the live code becomes.
"""

import datetime as dt
import hashlib
import json

import sqlalchemy as sa
from alembic import op

revision = "0029"
down_revision = "0028"
branch_labels = None
depends_on = None

GENESIS_HASH = "0" * 64
BATCH = 1000
INDEX = "ix_giving_requests_organization_id_id"
INCLUDED = [
    "created_at",
    "program_id",
    "program_version",
    "kind",
    "status",
    "amount",
    "computed_amount",
    "capped",
    "currency",
]
MOMENT = sa.DateTime(timezone=True)

users = sa.table(
    "users",
    sa.column("id"),
    sa.column("organization_id"),
    sa.column("role"),
    sa.column("active", sa.Boolean()),
    sa.column("created_at", MOMENT),
)
requests = sa.table("giving_requests", sa.column("id"), sa.column("organization_id"), sa.column("created_at", MOMENT))
events = sa.table(
    "evidence_events",
    sa.column("organization_id"),
    sa.column("seq", sa.BigInteger()),
    sa.column("type"),
    sa.column("subject_kind"),
    sa.column("subject_id"),
    sa.column("actor_id"),
    sa.column("data", sa.JSON()),
    sa.column("occurred_at", MOMENT),
    sa.column("prev_hash"),
    sa.column("hash"),
)
heads = sa.table("evidence_heads", sa.column("organization_id"), sa.column("seq", sa.BigInteger()), sa.column("hash"))
nodes = sa.table(
    "evidence_tree_nodes",
    sa.column("organization_id"),
    sa.column("level"),
    sa.column("position"),
    sa.column("hash", sa.LargeBinary()),
)


def _timestamp(moment: dt.datetime) -> str:
    """An event time as the log writes it: UTC, six fractional digits, `Z` (SQLite keeps no zone)."""
    moment = moment.replace(tzinfo=dt.UTC) if moment.tzinfo is None else moment.astimezone(dt.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _canonical(value: object) -> bytes:
    """RFC 8785 canonical JSON of the values written here: ASCII member names (which sort alike by
    code point and by UTF-16 unit), strings, integers, booleans and null, which `json` writes
    exactly as RFC 8785 does."""

    def plain(item: object) -> None:
        if isinstance(item, dict):
            for name, member in item.items():
                if not name.isascii():
                    raise ValueError(f"member name {name!r} is not ASCII")
                plain(member)
        elif isinstance(item, float) or not (item is None or isinstance(item, str | int)):
            raise ValueError(f"{item!r} has no canonical form in this migration")

    plain(value)
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _event_hash(event: dict) -> str:
    return hashlib.sha256(_canonical(event)).hexdigest()


# The tree's rule as of this revision (RFC 9162 §2.1), frozen here: leaf i is the event of seq i + 1.
def _leaf(hex_hash: str) -> bytes:
    return hashlib.sha256(b"\x00" + bytes.fromhex(hex_hash)).digest()


def _node(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _frontier(connection: sa.Connection, organization_id: str, size: int) -> list[bytes]:
    """The stored complete subtrees covering the tree's `size` leaves, largest first."""
    wanted = [(level, (size >> level) - 1) for level in reversed(range(size.bit_length())) if size >> level & 1]
    stored = {
        (level, position): bytes(hash_)
        for level, position, hash_ in connection.execute(
            sa.select(nodes.c.level, nodes.c.position, nodes.c.hash).where(
                nodes.c.organization_id == organization_id,
                sa.tuple_(nodes.c.level, nodes.c.position).in_(wanted),
            )
        )
    }
    return [stored[node] for node in wanted]


def _grow(frontier: list[bytes], size: int, hex_hash: str) -> list[tuple[int, int, bytes]]:
    """Add the event's leaf to a tree of `size` leaves: the subtrees it completes, itself first."""
    index, node, level = size, _leaf(hex_hash), 0
    made = [(0, index, node)]
    while index & 1:
        node = _node(frontier.pop(), node)
        index >>= 1
        level += 1
        made.append((level, index, node))
    frontier.append(node)
    return made


def upgrade() -> None:
    with op.batch_alter_table("giving_requests", schema=None) as batch_op:
        batch_op.create_index(INDEX, ["organization_id", "id"], unique=False, postgresql_include=INCLUDED)
    connection = op.get_bind()
    now = dt.datetime.now(dt.UTC)
    organization_ids = (
        connection.execute(
            sa.select(users.c.organization_id)
            .where(users.c.organization_id.is_not(None))
            .union(sa.select(requests.c.organization_id))
        )
        .scalars()
        .all()
    )
    for organization_id in sorted(organization_ids):
        _import(connection, organization_id, now)


def _missing(connection: sa.Connection, organization_id: str) -> list[tuple[dt.datetime, str, str, dict]]:
    """(the record's time, kind, id, data) of every fact the organization's log lacks."""
    logged = connection.execute(
        sa.select(events.c.subject_kind, events.c.subject_id, events.c.type, events.c.data).where(
            events.c.organization_id == organization_id,
            events.c.subject_kind.in_(("member", "giving_request")),
        )
    ).all()
    joined = {subject_id for kind, subject_id, type_, _ in logged if kind == "member" and type_ == "member.joined"}
    requested = {
        subject_id
        for kind, subject_id, type_, data in logged
        if kind == "giving_request" and type_ == "giving.requested" and "createdAt" not in data
    }
    missing = [
        (created_at, "member", user_id, {"recordedAt": _timestamp(created_at), "role": role, "active": bool(active)})
        for user_id, role, active, created_at in connection.execute(
            sa.select(users.c.id, users.c.role, users.c.active, users.c.created_at).where(
                users.c.organization_id == organization_id
            )
        )
        if user_id not in joined
    ]
    if requested:
        missing += [
            (created_at, "giving_request", request_id, {"recordedAt": _timestamp(created_at)})
            for request_id, created_at in connection.execute(
                sa.select(requests.c.id, requests.c.created_at).where(requests.c.organization_id == organization_id)
            )
            if request_id in requested
        ]
    return sorted(missing, key=lambda fact: (_timestamp(fact[0]), fact[1], fact[2]))


def _import(connection: sa.Connection, organization_id: str, now: dt.datetime) -> None:
    """Chain one `imported` event per missing fact after the organization's last event."""
    missing = _missing(connection, organization_id)
    if not missing:
        return
    last = connection.execute(
        sa.select(events.c.seq, events.c.hash)
        .where(events.c.organization_id == organization_id)
        .order_by(events.c.seq.desc())
        .limit(1)
    ).one_or_none()
    seq, prev_hash = (last.seq, last.hash) if last else (0, GENESIS_HASH)
    frontier = _frontier(connection, organization_id, seq)
    batch, tree = [], []
    for _, kind, record_id, data in missing:
        seq += 1
        event = {
            "seq": seq,
            "organizationId": organization_id,
            "type": "imported",
            "subject": {"kind": kind, "id": record_id},
            "actorId": None,
            "data": data,
            "occurredAt": _timestamp(now),
            "prevHash": prev_hash,
        }
        hash_ = _event_hash(event)
        batch.append(
            {
                "organization_id": organization_id,
                "seq": seq,
                "type": "imported",
                "subject_kind": kind,
                "subject_id": record_id,
                "actor_id": None,
                "data": data,
                "occurred_at": now,
                "prev_hash": prev_hash,
                "hash": hash_,
            }
        )
        tree += [
            {"organization_id": organization_id, "level": level, "position": position, "hash": node}
            for level, position, node in _grow(frontier, seq - 1, hash_)
        ]
        prev_hash = hash_
        if len(batch) == BATCH:
            connection.execute(events.insert(), batch)
            connection.execute(nodes.insert(), tree)
            batch, tree = [], []
    if batch:
        connection.execute(events.insert(), batch)
        connection.execute(nodes.insert(), tree)
    if connection.execute(sa.select(heads.c.seq).where(heads.c.organization_id == organization_id)).first() is None:
        connection.execute(heads.insert().values(organization_id=organization_id, seq=0, hash=GENESIS_HASH))
    # One advance over the run just appended, the one change the head row's trigger accepts.
    connection.execute(heads.update().where(heads.c.organization_id == organization_id).values(seq=seq, hash=prev_hash))


def downgrade() -> None:
    # The events stay: the log is append-only.
    with op.batch_alter_table("giving_requests", schema=None) as batch_op:
        batch_op.drop_index(INDEX)
