"""activity

Revision ID: 0003
Revises: 0002
Position: 3 (file names give the run order; revision ids stay as stored, docs/decisions.md §23)
"""

import sqlalchemy as sa
from alembic import op

import kindling.migrations.frozen_types

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "inbound_webhook_events",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("provider", sa.String(length=16), nullable=False),
        sa.Column("event_id", sa.String(length=255), nullable=False),
        sa.Column("event_type", sa.String(length=100), nullable=False),
        sa.Column("received_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_inbound_webhook_events")),
        sa.UniqueConstraint("provider", "event_id", name=op.f("uq_inbound_webhook_events_provider")),
    )
    op.create_table(
        "donations",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("organization_id", sa.String(length=36), nullable=False),
        sa.Column("user_id", sa.String(length=36), nullable=False),
        sa.Column("amount", sa.Integer(), nullable=False),
        sa.Column("currency", sa.String(length=3), nullable=False),
        sa.Column("recipient_name", sa.String(length=200), nullable=False),
        sa.Column("recipient_registration_number", sa.String(length=64), nullable=True),
        sa.Column("note", sa.String(length=1000), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("created_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("succeeded_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["organization_id"], ["organizations.id"], name=op.f("fk_donations_organization_id_organizations")
        ),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_donations_user_id_users")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_donations")),
    )
    with op.batch_alter_table("donations", schema=None) as batch_op:
        batch_op.create_index(
            "ix_donations_organization_id_created_at", ["organization_id", "created_at"], unique=False
        )
        batch_op.create_index("ix_donations_user_id_created_at", ["user_id", "created_at"], unique=False)

    op.create_table(
        "volunteer_opportunities",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("organization_id", sa.String(length=36), nullable=False),
        sa.Column("created_by", sa.String(length=36), nullable=False),
        sa.Column("title", sa.String(length=200), nullable=False),
        sa.Column("description", sa.String(length=2000), nullable=True),
        sa.Column("starts_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("ends_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("latitude", sa.Double(), nullable=False),
        sa.Column("longitude", sa.Double(), nullable=False),
        sa.Column("radius_meters", sa.Integer(), nullable=False),
        sa.Column("created_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["created_by"], ["users.id"], name=op.f("fk_volunteer_opportunities_created_by_users")),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_volunteer_opportunities_organization_id_organizations"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_volunteer_opportunities")),
    )
    with op.batch_alter_table("volunteer_opportunities", schema=None) as batch_op:
        batch_op.create_index(
            "ix_volunteer_opportunities_organization_id_starts_at", ["organization_id", "starts_at"], unique=False
        )

    op.create_table(
        "wellbeing_responses",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("organization_id", sa.String(length=36), nullable=False),
        sa.Column("user_id", sa.String(length=36), nullable=False),
        sa.Column("mood", sa.SmallInteger(), nullable=False),
        sa.Column("stress", sa.SmallInteger(), nullable=False),
        sa.Column("energy", sa.SmallInteger(), nullable=True),
        sa.Column("comment", sa.String(length=2000), nullable=True),
        sa.Column("anonymous", sa.Boolean(), nullable=False),
        sa.Column("sentiment_label", sa.String(length=8), nullable=False),
        sa.Column("sentiment_compound", sa.Double(), nullable=False),
        sa.Column("created_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_id"], ["organizations.id"], name=op.f("fk_wellbeing_responses_organization_id_organizations")
        ),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_wellbeing_responses_user_id_users")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_wellbeing_responses")),
    )
    with op.batch_alter_table("wellbeing_responses", schema=None) as batch_op:
        batch_op.create_index(
            "ix_wellbeing_responses_organization_id_created_at", ["organization_id", "created_at"], unique=False
        )
        batch_op.create_index("ix_wellbeing_responses_user_id_created_at", ["user_id", "created_at"], unique=False)

    op.create_table(
        "volunteer_check_ins",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("opportunity_id", sa.String(length=36), nullable=False),
        sa.Column("organization_id", sa.String(length=36), nullable=False),
        sa.Column("user_id", sa.String(length=36), nullable=False),
        sa.Column("checked_in_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("latitude", sa.Double(), nullable=False),
        sa.Column("longitude", sa.Double(), nullable=False),
        sa.Column("accuracy_meters", sa.Double(), nullable=True),
        sa.Column("distance_meters", sa.Double(), nullable=False),
        sa.Column("verified", sa.Boolean(), nullable=False),
        sa.Column("hours", sa.Double(), nullable=False),
        sa.ForeignKeyConstraint(
            ["opportunity_id"],
            ["volunteer_opportunities.id"],
            name=op.f("fk_volunteer_check_ins_opportunity_id_volunteer_opportunities"),
        ),
        sa.ForeignKeyConstraint(
            ["organization_id"], ["organizations.id"], name=op.f("fk_volunteer_check_ins_organization_id_organizations")
        ),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_volunteer_check_ins_user_id_users")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_volunteer_check_ins")),
        sa.UniqueConstraint("opportunity_id", "user_id", name=op.f("uq_volunteer_check_ins_opportunity_id")),
    )
    with op.batch_alter_table("volunteer_check_ins", schema=None) as batch_op:
        batch_op.create_index(
            "ix_volunteer_check_ins_organization_id_checked_in_at", ["organization_id", "checked_in_at"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("volunteer_check_ins", schema=None) as batch_op:
        batch_op.drop_index("ix_volunteer_check_ins_organization_id_checked_in_at")

    op.drop_table("volunteer_check_ins")
    with op.batch_alter_table("wellbeing_responses", schema=None) as batch_op:
        batch_op.drop_index("ix_wellbeing_responses_user_id_created_at")
        batch_op.drop_index("ix_wellbeing_responses_organization_id_created_at")

    op.drop_table("wellbeing_responses")
    with op.batch_alter_table("volunteer_opportunities", schema=None) as batch_op:
        batch_op.drop_index("ix_volunteer_opportunities_organization_id_starts_at")

    op.drop_table("volunteer_opportunities")
    with op.batch_alter_table("donations", schema=None) as batch_op:
        batch_op.drop_index("ix_donations_user_id_created_at")
        batch_op.drop_index("ix_donations_organization_id_created_at")

    op.drop_table("donations")
    op.drop_table("inbound_webhook_events")
