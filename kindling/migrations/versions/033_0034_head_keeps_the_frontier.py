"""the head row keeps the tree's frontier

Revision ID: 0034
Revises: 0033
Position: 33 (file names give the run order; revision ids stay as stored, docs/decisions.md §23)

An append extends the organization's tree from the hashes of the complete subtrees covering it
(its frontier). The head row now keeps them, packed, so that an append need not read them from
`evidence_tree_nodes` while it holds the head's lock. Filled here for every log from its nodes.
"""

import sqlalchemy as sa
from alembic import op

revision = "0034"
down_revision = "0033"
branch_labels = None
depends_on = None

heads = sa.table(
    "evidence_heads",
    sa.column("organization_id", sa.String()),
    sa.column("seq", sa.BigInteger()),
    sa.column("frontier", sa.LargeBinary()),
)
nodes = sa.table(
    "evidence_tree_nodes",
    sa.column("organization_id", sa.String()),
    sa.column("level", sa.SmallInteger()),
    sa.column("position", sa.BigInteger()),
    sa.column("hash", sa.LargeBinary()),
)


def _cover(size: int) -> list[tuple[int, int]]:
    """The (level, position) of the complete subtrees covering leaves [0, size), largest first
    (kindling/evidence/merkle.py, frontier_nodes, as of this revision)."""
    found, start = [], 0
    while start < size:
        level = (size - start).bit_length() - 1
        found.append((level, start >> level))
        start += 1 << level
    return found


def upgrade() -> None:
    with op.batch_alter_table("evidence_heads", schema=None) as batch_op:
        batch_op.add_column(sa.Column("frontier", sa.LargeBinary(), nullable=True))
    connection = op.get_bind()
    for organization_id, seq in connection.execute(sa.select(heads.c.organization_id, heads.c.seq)).all():
        stored = {
            (level, position): bytes(hash_)
            for level, position, hash_ in connection.execute(
                sa.select(nodes.c.level, nodes.c.position, nodes.c.hash).where(
                    nodes.c.organization_id == organization_id,
                    sa.tuple_(nodes.c.level, nodes.c.position).in_(_cover(seq)),
                )
            )
        }
        # A log whose nodes are not all there keeps none: its appends read them, as before.
        if len(stored) == len(_cover(seq)):
            connection.execute(
                heads.update()
                .where(heads.c.organization_id == organization_id)
                .values(frontier=b"".join(stored[node] for node in _cover(seq)))
            )


def downgrade() -> None:
    with op.batch_alter_table("evidence_heads", schema=None) as batch_op:
        batch_op.drop_column("frontier")
