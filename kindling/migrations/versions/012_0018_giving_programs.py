"""giving programs: programs, requests, claims, and the ledger rows that reserve caps and budgets

Revision ID: 0018
Revises: 0011
Position: 12 (file names give the run order; revision ids stay as stored, docs/decisions.md §23)
"""

import sqlalchemy as sa
from alembic import op

import kindling.migrations.frozen_types

revision = "0018"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "giving_programs",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("organization_id", sa.String(length=36), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("description", sa.String(length=2000), nullable=True),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("period_start_month", sa.Integer(), nullable=False),
        sa.Column("per_person_cap", sa.BigInteger(), nullable=False),
        sa.Column("budget", sa.BigInteger(), nullable=True),
        sa.Column("approval", sa.String(length=8), nullable=False),
        sa.Column("eligible_roles", sa.JSON(), nullable=True),
        sa.Column("eligible_departments", sa.JSON(), nullable=True),
        sa.Column("ratio_percent", sa.Integer(), nullable=True),
        sa.Column("minimum_gift", sa.BigInteger(), nullable=True),
        sa.Column("maximum_match_per_gift", sa.BigInteger(), nullable=True),
        sa.Column("rate_per_hour", sa.BigInteger(), nullable=True),
        sa.Column("minimum_hours", sa.Double(), nullable=True),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("created_by", sa.String(length=36), nullable=False),
        sa.Column("created_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["created_by"], ["users.id"], name=op.f("fk_giving_programs_created_by_users")),
        sa.ForeignKeyConstraint(
            ["organization_id"], ["organizations.id"], name=op.f("fk_giving_programs_organization_id_organizations")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_giving_programs")),
    )
    with op.batch_alter_table("giving_programs", schema=None) as batch_op:
        batch_op.create_index(
            "ix_giving_programs_organization_id_created_at", ["organization_id", "created_at", "id"], unique=False
        )

    op.create_table(
        "giving_ledgers",
        sa.Column("program_id", sa.String(length=36), nullable=False),
        sa.Column("period_start", sa.Date(), nullable=False),
        sa.Column("user_id", sa.String(length=36), nullable=False),
        sa.Column("reserved", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["program_id"], ["giving_programs.id"], name=op.f("fk_giving_ledgers_program_id_giving_programs")
        ),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_giving_ledgers_user_id_users")),
        sa.PrimaryKeyConstraint("program_id", "period_start", "user_id", name=op.f("pk_giving_ledgers")),
    )
    op.create_table(
        "giving_periods",
        sa.Column("program_id", sa.String(length=36), nullable=False),
        sa.Column("period_start", sa.Date(), nullable=False),
        sa.Column("reserved", sa.BigInteger(), nullable=False),
        sa.Column("requested_count", sa.Integer(), nullable=False),
        sa.Column("approved_count", sa.Integer(), nullable=False),
        sa.Column("paid_count", sa.Integer(), nullable=False),
        sa.Column("declined_count", sa.Integer(), nullable=False),
        sa.Column("reversed_count", sa.Integer(), nullable=False),
        sa.Column("ineligible_count", sa.Integer(), nullable=False),
        sa.Column("requested_amount", sa.BigInteger(), nullable=False),
        sa.Column("approved_amount", sa.BigInteger(), nullable=False),
        sa.Column("paid_amount", sa.BigInteger(), nullable=False),
        sa.Column("granted_hours", sa.Double(), nullable=False),
        sa.ForeignKeyConstraint(
            ["program_id"], ["giving_programs.id"], name=op.f("fk_giving_periods_program_id_giving_programs")
        ),
        sa.PrimaryKeyConstraint("program_id", "period_start", name=op.f("pk_giving_periods")),
    )
    op.create_table(
        "giving_requests",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("organization_id", sa.String(length=36), nullable=False),
        sa.Column("program_id", sa.String(length=36), nullable=False),
        sa.Column("program_version", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("user_id", sa.String(length=36), nullable=False),
        sa.Column("donation_id", sa.String(length=36), nullable=True),
        sa.Column("period_start", sa.Date(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("reason", sa.String(length=32), nullable=True),
        sa.Column("gift_amount", sa.BigInteger(), nullable=True),
        sa.Column("ratio_percent", sa.Integer(), nullable=True),
        sa.Column("hours", sa.Double(), nullable=True),
        sa.Column("rate_per_hour", sa.BigInteger(), nullable=True),
        sa.Column("computed_amount", sa.BigInteger(), nullable=False),
        sa.Column("amount", sa.BigInteger(), nullable=False),
        sa.Column("currency", sa.String(length=3), nullable=False),
        sa.Column("capped", sa.Boolean(), nullable=False),
        sa.Column("clawback", sa.Boolean(), nullable=False),
        sa.Column("recipient_name", sa.String(length=200), nullable=False),
        sa.Column("recipient_registration_number", sa.String(length=64), nullable=True),
        sa.Column("decided_by", sa.String(length=36), nullable=True),
        sa.Column("decided_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=True),
        sa.Column("decision_reason", sa.String(length=200), nullable=True),
        sa.Column("decision_note", sa.String(length=2000), nullable=True),
        sa.Column("payout_reference", sa.String(length=200), nullable=True),
        sa.Column("paid_by", sa.String(length=36), nullable=True),
        sa.Column("paid_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=True),
        sa.Column("reversed_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=True),
        sa.Column("created_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["decided_by"], ["users.id"], name=op.f("fk_giving_requests_decided_by_users")),
        sa.ForeignKeyConstraint(
            ["donation_id"], ["donations.id"], name=op.f("fk_giving_requests_donation_id_donations")
        ),
        sa.ForeignKeyConstraint(
            ["organization_id"], ["organizations.id"], name=op.f("fk_giving_requests_organization_id_organizations")
        ),
        sa.ForeignKeyConstraint(["paid_by"], ["users.id"], name=op.f("fk_giving_requests_paid_by_users")),
        sa.ForeignKeyConstraint(
            ["program_id"], ["giving_programs.id"], name=op.f("fk_giving_requests_program_id_giving_programs")
        ),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_giving_requests_user_id_users")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_giving_requests")),
        sa.UniqueConstraint("donation_id", "program_id", name=op.f("uq_giving_requests_donation_id")),
    )
    with op.batch_alter_table("giving_requests", schema=None) as batch_op:
        batch_op.create_index(
            "ix_giving_requests_organization_id_created_at", ["organization_id", "created_at", "id"], unique=False
        )
        batch_op.create_index(
            "ix_giving_requests_program_id_period_start", ["program_id", "period_start", "status"], unique=False
        )
        batch_op.create_index("ix_giving_requests_user_id_created_at", ["user_id", "created_at", "id"], unique=False)

    op.create_table(
        "giving_claims",
        sa.Column("check_in_id", sa.String(length=36), nullable=False),
        sa.Column("request_id", sa.String(length=36), nullable=False),
        sa.ForeignKeyConstraint(
            ["check_in_id"], ["volunteer_check_ins.id"], name=op.f("fk_giving_claims_check_in_id_volunteer_check_ins")
        ),
        sa.ForeignKeyConstraint(
            ["request_id"], ["giving_requests.id"], name=op.f("fk_giving_claims_request_id_giving_requests")
        ),
        sa.PrimaryKeyConstraint("check_in_id", name=op.f("pk_giving_claims")),
    )
    with op.batch_alter_table("giving_claims", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_giving_claims_request_id"), ["request_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("giving_claims", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_giving_claims_request_id"))

    op.drop_table("giving_claims")
    with op.batch_alter_table("giving_requests", schema=None) as batch_op:
        batch_op.drop_index("ix_giving_requests_user_id_created_at")
        batch_op.drop_index("ix_giving_requests_program_id_period_start")
        batch_op.drop_index("ix_giving_requests_organization_id_created_at")

    op.drop_table("giving_requests")
    op.drop_table("giving_periods")
    op.drop_table("giving_ledgers")
    with op.batch_alter_table("giving_programs", schema=None) as batch_op:
        batch_op.drop_index("ix_giving_programs_organization_id_created_at")

    op.drop_table("giving_programs")
