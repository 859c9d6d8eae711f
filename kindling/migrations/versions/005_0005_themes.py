"""themes

Revision ID: 0005
Revises: 0004
Position: 5 (file names give the run order; revision ids stay as stored, docs/decisions.md §23)
"""

import sqlalchemy as sa
from alembic import op

import kindling.migrations.frozen_types

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "organization_themes",
        sa.Column("organization_id", sa.String(length=36), nullable=False),
        sa.Column("light", sa.JSON(), nullable=False),
        sa.Column("dark", sa.JSON(), nullable=False),
        sa.Column("updated_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_by", sa.String(length=36), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_id"], ["organizations.id"], name=op.f("fk_organization_themes_organization_id_organizations")
        ),
        sa.ForeignKeyConstraint(["updated_by"], ["users.id"], name=op.f("fk_organization_themes_updated_by_users")),
        sa.PrimaryKeyConstraint("organization_id", name=op.f("pk_organization_themes")),
    )
    with op.batch_alter_table("organization_themes", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_organization_themes_updated_by"), ["updated_by"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("organization_themes", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_organization_themes_updated_by"))

    op.drop_table("organization_themes")
