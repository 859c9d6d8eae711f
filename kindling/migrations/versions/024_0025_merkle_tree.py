"""each log is also a Merkle tree

Revision ID: 0025
Revises: 0024
Position: 24 (file names give the run order; revision ids stay as stored, docs/decisions.md §23)

`evidence_tree_nodes` holds the hash of every complete subtree of each organization's RFC 9162
tree, whose leaf i is the 32 raw bytes of the hash of event seq i + 1; it is built here for
every existing log, in seq order. Each checkpoint gets the tree's root at its seq (`root_hash`),
room for its signed note (the checkpoints made before have none), and the time a fork was
found against it. On PostgreSQL nodes are append-only, like the events.
"""

import base64
import hashlib

import sqlalchemy as sa
from alembic import op

import kindling.migrations.frozen_types

revision = "0025"
down_revision = "0024"
branch_labels = None
depends_on = None

UTC = kindling.migrations.frozen_types.UTCDateTime(timezone=True)
BATCH = 5000

APPEND_ONLY = """
CREATE TRIGGER evidence_tree_nodes_no_update_delete BEFORE UPDATE OR DELETE ON evidence_tree_nodes
  FOR EACH ROW EXECUTE FUNCTION evidence_events_append_only();
CREATE TRIGGER evidence_tree_nodes_no_truncate BEFORE TRUNCATE ON evidence_tree_nodes
  FOR EACH STATEMENT EXECUTE FUNCTION evidence_events_append_only();
"""

events = sa.table("evidence_events", sa.column("organization_id"), sa.column("seq", sa.BigInteger), sa.column("hash"))
nodes = sa.table(
    "evidence_tree_nodes",
    sa.column("organization_id"),
    sa.column("level"),
    sa.column("position"),
    sa.column("hash", sa.LargeBinary),
)
checkpoints = sa.table(
    "evidence_checkpoints", sa.column("id"), sa.column("organization_id"), sa.column("seq"), sa.column("root_hash")
)


# The tree's rule as of this revision (RFC 9162 §2.1), frozen here.
def _leaf(hex_hash: str) -> bytes:
    return hashlib.sha256(b"\x00" + bytes.fromhex(hex_hash)).digest()


def _node(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _root(frontier: list[bytes]) -> bytes:
    if not frontier:
        return hashlib.sha256(b"").digest()
    node = frontier[-1]
    for left in reversed(frontier[:-1]):
        node = _node(left, node)
    return node


def _build(connection: sa.Connection, organization_id: str, roots_at: set[int]) -> dict[int, bytes]:
    """Write the organization's nodes; its roots at the sizes `roots_at`."""
    frontier: list[bytes] = []
    roots, rows = {}, []
    if 0 in roots_at:
        roots[0] = _root(frontier)
    result = connection.execute(
        sa.select(events.c.hash)
        .where(events.c.organization_id == organization_id)
        .order_by(events.c.seq)
        .execution_options(yield_per=BATCH)
    )
    for size, (hex_hash,) in enumerate(result, start=1):
        index, node, level = size - 1, _leaf(hex_hash), 0
        rows.append({"organization_id": organization_id, "level": 0, "position": index, "hash": node})
        while index & 1:
            node = _node(frontier.pop(), node)
            index >>= 1
            level += 1
            rows.append({"organization_id": organization_id, "level": level, "position": index, "hash": node})
        frontier.append(node)
        if size in roots_at:
            roots[size] = _root(frontier)
        if len(rows) >= BATCH:
            connection.execute(nodes.insert(), rows)
            rows = []
    if rows:
        connection.execute(nodes.insert(), rows)
    return roots


def upgrade() -> None:
    op.create_table(
        "evidence_tree_nodes",
        sa.Column("organization_id", sa.String(length=36), nullable=False),
        sa.Column("level", sa.SmallInteger(), autoincrement=False, nullable=False),
        sa.Column("position", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("hash", sa.LargeBinary(length=32), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_evidence_tree_nodes_organization_id_organizations"),
        ),
        sa.PrimaryKeyConstraint("organization_id", "level", "position", name=op.f("pk_evidence_tree_nodes")),
    )
    with op.batch_alter_table("evidence_checkpoints", schema=None) as batch_op:
        batch_op.add_column(sa.Column("root_hash", sa.String(length=44), nullable=True))
        batch_op.add_column(sa.Column("note", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("fork_detected_at", UTC, nullable=True))
    connection = op.get_bind()
    organizations = connection.execute(
        sa.union(sa.select(events.c.organization_id), sa.select(checkpoints.c.organization_id))
    ).scalars()
    for organization_id in organizations.all():
        made = connection.execute(
            sa.select(checkpoints.c.id, checkpoints.c.seq).where(checkpoints.c.organization_id == organization_id)
        ).all()
        roots = _build(connection, organization_id, {seq for _, seq in made})
        for checkpoint_id, seq in made:
            # A checkpoint beyond its log (shortened since) gets 32 zero bytes, the root of no tree:
            # verify reports it as the first checkpoint the log does not extend.
            root = roots.get(seq, bytes(32))
            connection.execute(
                checkpoints.update()
                .where(checkpoints.c.id == checkpoint_id)
                .values(root_hash=base64.b64encode(root).decode())
            )
    with op.batch_alter_table("evidence_checkpoints", schema=None) as batch_op:
        batch_op.alter_column("root_hash", existing_type=sa.String(length=44), nullable=False)
    if op.get_context().dialect.name == "postgresql":
        op.execute(APPEND_ONLY)


def downgrade() -> None:
    if op.get_context().dialect.name == "postgresql":
        op.execute("DROP TRIGGER evidence_tree_nodes_no_truncate ON evidence_tree_nodes")
        op.execute("DROP TRIGGER evidence_tree_nodes_no_update_delete ON evidence_tree_nodes")
    with op.batch_alter_table("evidence_checkpoints", schema=None) as batch_op:
        batch_op.drop_column("fork_detected_at")
        batch_op.drop_column("note")
        batch_op.drop_column("root_hash")
    op.drop_table("evidence_tree_nodes")
