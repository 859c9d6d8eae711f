"""outbound events

Revision ID: 0006
Revises: 0005
Position: 6 (file names give the run order; revision ids stay as stored, docs/decisions.md §23)
"""

import sqlalchemy as sa
from alembic import op

import kindling.migrations.frozen_types

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "portfolio_milestones",
        sa.Column("organization_id", sa.String(length=36), nullable=False),
        sa.Column("metric", sa.String(length=32), nullable=False),
        sa.Column("threshold", sa.Integer(), nullable=False),
        sa.Column("reached_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_portfolio_milestones_organization_id_organizations"),
        ),
        sa.PrimaryKeyConstraint("organization_id", "metric", "threshold", name=op.f("pk_portfolio_milestones")),
    )
    op.create_table(
        "webhook_endpoints",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("consultant_id", sa.String(length=36), nullable=False),
        sa.Column("url", sa.String(length=2048), nullable=False),
        sa.Column("description", sa.String(length=500), nullable=True),
        sa.Column("events", sa.JSON(), nullable=False),
        sa.Column("secret", sa.String(length=64), nullable=False),
        sa.Column("previous_secret", sa.String(length=64), nullable=True),
        sa.Column(
            "previous_secret_expires_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=True
        ),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("disabled_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=True),
        sa.Column("failing_since", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=True),
        sa.Column("created_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["consultant_id"], ["users.id"], name=op.f("fk_webhook_endpoints_consultant_id_users")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhook_endpoints")),
    )
    with op.batch_alter_table("webhook_endpoints", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_webhook_endpoints_consultant_id"), ["consultant_id"], unique=False)

    op.create_table(
        "webhook_events",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("consultant_id", sa.String(length=36), nullable=False),
        sa.Column("type", sa.String(length=40), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("created_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["consultant_id"], ["users.id"], name=op.f("fk_webhook_events_consultant_id_users")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhook_events")),
    )
    op.create_table(
        "webhook_deliveries",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("endpoint_id", sa.String(length=36), nullable=False),
        sa.Column("event_id", sa.String(length=40), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=True),
        sa.Column("locked_until", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=True),
        sa.Column("claim_token", sa.String(length=36), nullable=True),
        sa.Column("last_attempt_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=True),
        sa.Column("last_response_code", sa.Integer(), nullable=True),
        sa.Column("last_error", sa.String(length=200), nullable=True),
        sa.Column("delivered_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=True),
        sa.Column("created_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["endpoint_id"],
            ["webhook_endpoints.id"],
            name=op.f("fk_webhook_deliveries_endpoint_id_webhook_endpoints"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["event_id"],
            ["webhook_events.id"],
            name=op.f("fk_webhook_deliveries_event_id_webhook_events"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhook_deliveries")),
        sa.UniqueConstraint("endpoint_id", "event_id", name=op.f("uq_webhook_deliveries_endpoint_id")),
    )
    with op.batch_alter_table("webhook_deliveries", schema=None) as batch_op:
        batch_op.create_index("ix_webhook_deliveries_due", ["status", "next_attempt_at"], unique=False)
        batch_op.create_index("ix_webhook_deliveries_endpoint_created", ["endpoint_id", "created_at"], unique=False)
        batch_op.create_index(batch_op.f("ix_webhook_deliveries_event_id"), ["event_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("webhook_deliveries", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_webhook_deliveries_event_id"))
        batch_op.drop_index("ix_webhook_deliveries_endpoint_created")
        batch_op.drop_index("ix_webhook_deliveries_due")

    op.drop_table("webhook_deliveries")
    op.drop_table("webhook_events")
    with op.batch_alter_table("webhook_endpoints", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_webhook_endpoints_consultant_id"))

    op.drop_table("webhook_endpoints")
    op.drop_table("portfolio_milestones")
