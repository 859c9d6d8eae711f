"""report indexes

Revision ID: 0007
Revises: 0006
Position: 7 (file names give the run order; revision ids stay as stored, docs/decisions.md §23)
"""

from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("kindness_acts", schema=None) as batch_op:
        batch_op.create_index(
            "ix_kindness_acts_organization_created_evidence",
            ["organization_id", "created_at", "verification_level", "category"],
            unique=False,
        )


def downgrade() -> None:
    with op.batch_alter_table("kindness_acts", schema=None) as batch_op:
        batch_op.drop_index("ix_kindness_acts_organization_created_evidence")
