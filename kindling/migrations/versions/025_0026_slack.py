"""slack

Revision ID: 0026
Revises: 0025
Position: 25 (file names give the run order; revision ids stay as stored, docs/decisions.md §23)

The Slack app: each organization's installation (its bot token sealed), the installs under way,
the signatures of requests already acted on, the acts recorded from Slack and the worker's Slack
jobs. Acts gain `source`; every existing act was recorded through the API.
"""

import sqlalchemy as sa
from alembic import op

import kindling.migrations.frozen_types

revision = "0026"
down_revision = "0025"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "slack_jobs",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("team_id", sa.String(length=32), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("locked_until", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=True),
        sa.Column("claim_token", sa.String(length=36), nullable=True),
        sa.Column("last_error", sa.String(length=200), nullable=True),
        sa.Column("created_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_slack_jobs")),
    )
    with op.batch_alter_table("slack_jobs", schema=None) as batch_op:
        batch_op.create_index("ix_slack_jobs_due", ["status", "next_attempt_at"], unique=False)

    op.create_table(
        "slack_requests_seen",
        sa.Column("signature_hash", sa.String(length=64), nullable=False),
        sa.Column("expires_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("signature_hash", name=op.f("pk_slack_requests_seen")),
    )
    with op.batch_alter_table("slack_requests_seen", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_slack_requests_seen_expires_at"), ["expires_at"], unique=False)

    op.create_table(
        "slack_install_states",
        sa.Column("state_hash", sa.String(length=64), nullable=False),
        sa.Column("organization_id", sa.String(length=36), nullable=False),
        sa.Column("user_id", sa.String(length=36), nullable=False),
        sa.Column("expires_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_slack_install_states_organization_id_organizations"),
        ),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_slack_install_states_user_id_users")),
        sa.PrimaryKeyConstraint("state_hash", name=op.f("pk_slack_install_states")),
    )
    with op.batch_alter_table("slack_install_states", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_slack_install_states_expires_at"), ["expires_at"], unique=False)
        batch_op.create_index(batch_op.f("ix_slack_install_states_organization_id"), ["organization_id"], unique=False)

    op.create_table(
        "slack_installations",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("organization_id", sa.String(length=36), nullable=False),
        sa.Column("team_id", sa.String(length=32), nullable=False),
        sa.Column("team_name", sa.String(length=200), nullable=True),
        sa.Column("app_id", sa.String(length=32), nullable=True),
        sa.Column("bot_user_id", sa.String(length=32), nullable=True),
        sa.Column("scopes", sa.String(length=500), nullable=False),
        sa.Column("bot_token_encrypted", sa.Text(), nullable=False),
        sa.Column("installed_by", sa.String(length=36), nullable=False),
        sa.Column("installed_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["installed_by"], ["users.id"], name=op.f("fk_slack_installations_installed_by_users")),
        sa.ForeignKeyConstraint(
            ["organization_id"], ["organizations.id"], name=op.f("fk_slack_installations_organization_id_organizations")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_slack_installations")),
        sa.UniqueConstraint("organization_id", name=op.f("uq_slack_installations_organization_id")),
        sa.UniqueConstraint("team_id", name=op.f("uq_slack_installations_team_id")),
    )
    op.create_table(
        "slack_acts",
        sa.Column("act_id", sa.String(length=36), nullable=False),
        sa.Column("team_id", sa.String(length=32), nullable=False),
        sa.Column("sender_slack_id", sa.String(length=32), nullable=False),
        sa.Column("recipient_slack_id", sa.String(length=32), nullable=False),
        sa.Column("created_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["act_id"], ["kindness_acts.id"], name=op.f("fk_slack_acts_act_id_kindness_acts")),
        sa.PrimaryKeyConstraint("act_id", name=op.f("pk_slack_acts")),
    )
    with op.batch_alter_table("kindness_acts", schema=None) as batch_op:
        batch_op.add_column(sa.Column("source", sa.String(length=16), server_default="api", nullable=False))


def downgrade() -> None:
    with op.batch_alter_table("kindness_acts", schema=None) as batch_op:
        batch_op.drop_column("source")

    op.drop_table("slack_acts")
    op.drop_table("slack_installations")
    with op.batch_alter_table("slack_install_states", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_slack_install_states_organization_id"))
        batch_op.drop_index(batch_op.f("ix_slack_install_states_expires_at"))

    op.drop_table("slack_install_states")
    with op.batch_alter_table("slack_requests_seen", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_slack_requests_seen_expires_at"))

    op.drop_table("slack_requests_seen")
    with op.batch_alter_table("slack_jobs", schema=None) as batch_op:
        batch_op.drop_index("ix_slack_jobs_due")

    op.drop_table("slack_jobs")
