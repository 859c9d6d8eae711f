"""idempotent responses

Revision ID: 0021
Revises: 0020
Position: 20 (file names give the run order; revision ids stay as stored, docs/decisions.md §23)

The responses of writes sent with an Idempotency-Key, kept a day so that their retries answer
the same.
"""

import sqlalchemy as sa
from alembic import op

import kindling.migrations.frozen_types

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "idempotent_responses",
        sa.Column("user_id", sa.String(length=36), nullable=False),
        sa.Column("key", sa.String(length=255), nullable=False),
        sa.Column("operation", sa.String(length=2100), nullable=False),
        sa.Column("body_sha256", sa.String(length=64), nullable=False),
        sa.Column("status", sa.Integer(), nullable=True),
        sa.Column("headers", sa.JSON(), nullable=True),
        sa.Column("body", sa.LargeBinary(), nullable=True),
        sa.Column("created_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("user_id", "key", name=op.f("pk_idempotent_responses")),
    )
    with op.batch_alter_table("idempotent_responses", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_idempotent_responses_created_at"), ["created_at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("idempotent_responses", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_idempotent_responses_created_at"))
    op.drop_table("idempotent_responses")
