"""the auditor grant

Revision ID: 0033
Revises: 0032
Position: 32 (file names give the run order; revision ids stay as stored, docs/decisions.md §23)

The auditor grant beside a person's role (docs/decisions.md, "The auditor grant"): the one an admin gives by hand,
and the one the person holds, by hand or through a directory group mapped to `auditor`. Nobody
holds it yet.
"""

import sqlalchemy as sa
from alembic import op

revision = "0033"
down_revision = "0032"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.add_column(sa.Column("hand_auditor", sa.Boolean(), server_default="0", nullable=False))
        batch_op.add_column(sa.Column("auditor", sa.Boolean(), server_default="0", nullable=False))


def downgrade() -> None:
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.drop_column("auditor")
        batch_op.drop_column("hand_auditor")
