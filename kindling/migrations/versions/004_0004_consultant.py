"""consultant

Revision ID: 0004
Revises: 0003
Position: 4 (file names give the run order; revision ids stay as stored, docs/decisions.md §23)
"""

import sqlalchemy as sa
from alembic import op

import kindling.migrations.frozen_types

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "invitations",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("consultant_id", sa.String(length=36), nullable=False),
        sa.Column("organization_id", sa.String(length=36), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("message", sa.String(length=1000), nullable=True),
        sa.Column("created_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("expires_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("responded_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["consultant_id"], ["users.id"], name=op.f("fk_invitations_consultant_id_users")),
        sa.ForeignKeyConstraint(
            ["organization_id"], ["organizations.id"], name=op.f("fk_invitations_organization_id_organizations")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_invitations")),
    )
    with op.batch_alter_table("invitations", schema=None) as batch_op:
        batch_op.create_index("ix_invitations_consultant_id_created_at", ["consultant_id", "created_at"], unique=False)
        batch_op.create_index(
            "ix_invitations_organization_id_created_at", ["organization_id", "created_at"], unique=False
        )
        batch_op.create_index(
            "uq_invitations_pending_pair",
            ["consultant_id", "organization_id"],
            unique=True,
            sqlite_where=sa.text("status = 'pending'"),
            postgresql_where=sa.text("status = 'pending'"),
        )

    op.create_table(
        "client_relationships",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("consultant_id", sa.String(length=36), nullable=False),
        sa.Column("organization_id", sa.String(length=36), nullable=False),
        sa.Column("invitation_id", sa.String(length=36), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("accepted_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("ended_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["consultant_id"], ["users.id"], name=op.f("fk_client_relationships_consultant_id_users")
        ),
        sa.ForeignKeyConstraint(
            ["invitation_id"], ["invitations.id"], name=op.f("fk_client_relationships_invitation_id_invitations")
        ),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_client_relationships_organization_id_organizations"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_client_relationships")),
        sa.UniqueConstraint("invitation_id", name=op.f("uq_client_relationships_invitation_id")),
    )
    with op.batch_alter_table("client_relationships", schema=None) as batch_op:
        batch_op.create_index("ix_client_relationships_organization_id", ["organization_id"], unique=False)
        batch_op.create_index(
            "uq_client_relationships_active_pair",
            ["consultant_id", "organization_id"],
            unique=True,
            sqlite_where=sa.text("status = 'active'"),
            postgresql_where=sa.text("status = 'active'"),
        )


def downgrade() -> None:
    with op.batch_alter_table("client_relationships", schema=None) as batch_op:
        batch_op.drop_index(
            "uq_client_relationships_active_pair",
            sqlite_where=sa.text("status = 'active'"),
            postgresql_where=sa.text("status = 'active'"),
        )
        batch_op.drop_index("ix_client_relationships_organization_id")

    op.drop_table("client_relationships")
    with op.batch_alter_table("invitations", schema=None) as batch_op:
        batch_op.drop_index(
            "uq_invitations_pending_pair",
            sqlite_where=sa.text("status = 'pending'"),
            postgresql_where=sa.text("status = 'pending'"),
        )
        batch_op.drop_index("ix_invitations_organization_id_created_at")
        batch_op.drop_index("ix_invitations_consultant_id_created_at")

    op.drop_table("invitations")
