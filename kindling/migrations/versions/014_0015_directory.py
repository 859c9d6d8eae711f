"""directory: SCIM tokens, SCIM users, groups as roles, reporting lines

Revision ID: 0015
Revises: 0017
Position: 14 (file names give the run order; revision ids stay as stored, docs/decisions.md §23)

Every existing member's hand-set role is the role they have: nobody belongs to a group yet.
"""

import sqlalchemy as sa
from alembic import op

import kindling.migrations.frozen_types

revision = "0015"
down_revision = "0017"
branch_labels = None
depends_on = None

UTC = kindling.migrations.frozen_types.UTCDateTime(timezone=True)


def upgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.add_column(sa.Column("hand_role", sa.String(length=16), nullable=True))
        batch.add_column(sa.Column("manager_id", sa.String(length=36), nullable=True))
        batch.add_column(sa.Column("department", sa.String(length=255), nullable=True))
        batch.add_column(sa.Column("employee_number", sa.String(length=255), nullable=True))
        batch.create_foreign_key(batch.f("fk_users_manager_id_users"), "users", ["manager_id"], ["id"])
        batch.create_index(batch.f("ix_users_manager_id"), ["manager_id"], unique=False)
    op.execute("UPDATE users SET hand_role = role")
    with op.batch_alter_table("verification_decisions") as batch:
        batch.add_column(sa.Column("authority", sa.String(length=16), nullable=True))
    op.create_index(
        "ix_evidence_events_organization_id_type", "evidence_events", ["organization_id", "type", "seq"], unique=False
    )
    op.create_table(
        "scim_tokens",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("organization_id", sa.String(length=36), nullable=False),
        sa.Column("description", sa.String(length=200), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("created_by", sa.String(length=36), nullable=False),
        sa.Column("created_at", UTC, nullable=False),
        sa.Column("last_used_at", UTC, nullable=True),
        sa.Column("revoked_at", UTC, nullable=True),
        sa.ForeignKeyConstraint(["created_by"], ["users.id"], name=op.f("fk_scim_tokens_created_by_users")),
        sa.ForeignKeyConstraint(
            ["organization_id"], ["organizations.id"], name=op.f("fk_scim_tokens_organization_id_organizations")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_scim_tokens")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_scim_tokens_token_hash")),
    )
    op.create_index(op.f("ix_scim_tokens_organization_id"), "scim_tokens", ["organization_id"], unique=False)
    op.create_table(
        "scim_users",
        sa.Column("user_id", sa.String(length=36), nullable=False),
        sa.Column("organization_id", sa.String(length=36), nullable=False),
        sa.Column("user_name", sa.String(length=255), nullable=False),
        sa.Column("user_name_key", sa.String(length=255), nullable=False),
        sa.Column("external_id", sa.String(length=255), nullable=True),
        sa.Column("display_name", sa.String(length=255), nullable=True),
        sa.Column("given_name", sa.String(length=255), nullable=True),
        sa.Column("family_name", sa.String(length=255), nullable=True),
        sa.Column("title", sa.String(length=255), nullable=True),
        sa.Column("work_email", sa.String(length=254), nullable=True),
        sa.Column("resource", sa.JSON(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("created_at", UTC, nullable=False),
        sa.Column("updated_at", UTC, nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_id"], ["organizations.id"], name=op.f("fk_scim_users_organization_id_organizations")
        ),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_scim_users_user_id_users")),
        sa.PrimaryKeyConstraint("user_id", name=op.f("pk_scim_users")),
        sa.UniqueConstraint("organization_id", "user_name_key", name="uq_scim_users_organization_id_user_name_key"),
    )
    op.create_index(
        "ix_scim_users_organization_id_external_id", "scim_users", ["organization_id", "external_id"], unique=False
    )
    op.create_table(
        "directory_groups",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("organization_id", sa.String(length=36), nullable=False),
        sa.Column("display_name", sa.String(length=255), nullable=False),
        sa.Column("display_name_key", sa.String(length=255), nullable=False),
        sa.Column("external_id", sa.String(length=255), nullable=True),
        sa.Column("role", sa.String(length=16), nullable=True),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("created_at", UTC, nullable=False),
        sa.Column("updated_at", UTC, nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_id"], ["organizations.id"], name=op.f("fk_directory_groups_organization_id_organizations")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_directory_groups")),
        sa.UniqueConstraint(
            "organization_id", "display_name_key", name="uq_directory_groups_organization_id_display_name_key"
        ),
    )
    op.create_table(
        "directory_group_members",
        sa.Column("group_id", sa.String(length=36), nullable=False),
        sa.Column("user_id", sa.String(length=36), nullable=False),
        sa.ForeignKeyConstraint(
            ["group_id"],
            ["directory_groups.id"],
            name=op.f("fk_directory_group_members_group_id_directory_groups"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_directory_group_members_user_id_users")),
        sa.PrimaryKeyConstraint("group_id", "user_id", name=op.f("pk_directory_group_members")),
    )
    op.create_index(op.f("ix_directory_group_members_user_id"), "directory_group_members", ["user_id"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_directory_group_members_user_id"), table_name="directory_group_members")
    op.drop_table("directory_group_members")
    op.drop_table("directory_groups")
    op.drop_index("ix_scim_users_organization_id_external_id", table_name="scim_users")
    op.drop_table("scim_users")
    op.drop_index(op.f("ix_scim_tokens_organization_id"), table_name="scim_tokens")
    op.drop_table("scim_tokens")
    op.drop_index("ix_evidence_events_organization_id_type", table_name="evidence_events")
    with op.batch_alter_table("verification_decisions") as batch:
        batch.drop_column("authority")
    with op.batch_alter_table("users") as batch:
        batch.drop_index(batch.f("ix_users_manager_id"))
        batch.drop_constraint(batch.f("fk_users_manager_id_users"), type_="foreignkey")
        batch.drop_column("employee_number")
        batch.drop_column("department")
        batch.drop_column("manager_id")
        batch.drop_column("hand_role")
