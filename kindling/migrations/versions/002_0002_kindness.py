"""kindness

Revision ID: 0002
Revises: 0001
Position: 2 (file names give the run order; revision ids stay as stored, docs/decisions.md §23)
"""

import sqlalchemy as sa
from alembic import op

import kindling.migrations.frozen_types

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "kindness_recipient_tallies",
        sa.Column("organization_id", sa.String(length=36), nullable=False),
        sa.Column("recipient_id", sa.String(length=200), nullable=False),
        sa.Column("acts", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_kindness_recipient_tallies_organization_id_organizations"),
        ),
        sa.PrimaryKeyConstraint("organization_id", "recipient_id", name=op.f("pk_kindness_recipient_tallies")),
    )
    with op.batch_alter_table("kindness_recipient_tallies", schema=None) as batch_op:
        batch_op.create_index(
            "ix_kindness_recipient_tallies_organization_acts", ["organization_id", "acts"], unique=False
        )

    op.create_table(
        "kindness_tallies",
        sa.Column("organization_id", sa.String(length=36), nullable=False),
        sa.Column("category", sa.String(length=32), nullable=False),
        sa.Column("acts", sa.Integer(), nullable=False),
        sa.Column("verification_sum", sa.Integer(), nullable=False),
        sa.Column("ripple_sum", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_id"], ["organizations.id"], name=op.f("fk_kindness_tallies_organization_id_organizations")
        ),
        sa.PrimaryKeyConstraint("organization_id", "category", name=op.f("pk_kindness_tallies")),
    )
    op.create_table(
        "kindness_acts",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("organization_id", sa.String(length=36), nullable=False),
        sa.Column("user_id", sa.String(length=36), nullable=False),
        sa.Column("recipient_id", sa.String(length=200), nullable=False),
        sa.Column("description", sa.String(length=2000), nullable=False),
        sa.Column("category", sa.String(length=32), nullable=False),
        sa.Column("verification_level", sa.SmallInteger(), nullable=False),
        sa.Column("media", sa.JSON(), nullable=False),
        sa.Column("ripple_count", sa.SmallInteger(), nullable=False),
        sa.Column("created_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_id"], ["organizations.id"], name=op.f("fk_kindness_acts_organization_id_organizations")
        ),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_kindness_acts_user_id_users")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_kindness_acts")),
    )
    with op.batch_alter_table("kindness_acts", schema=None) as batch_op:
        batch_op.create_index(
            "ix_kindness_acts_organization_created", ["organization_id", "created_at", "id"], unique=False
        )
        batch_op.create_index(
            "ix_kindness_acts_organization_recipient", ["organization_id", "recipient_id", "created_at"], unique=False
        )
        batch_op.create_index(
            "ix_kindness_acts_organization_sender", ["organization_id", "user_id", "created_at", "id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("kindness_acts", schema=None) as batch_op:
        batch_op.drop_index("ix_kindness_acts_organization_sender")
        batch_op.drop_index("ix_kindness_acts_organization_recipient")
        batch_op.drop_index("ix_kindness_acts_organization_created")

    op.drop_table("kindness_acts")
    op.drop_table("kindness_tallies")
    with op.batch_alter_table("kindness_recipient_tallies", schema=None) as batch_op:
        batch_op.drop_index("ix_kindness_recipient_tallies_organization_acts")

    op.drop_table("kindness_recipient_tallies")
