"""storage clean-ups: the tables an erasure changed, until the worker has rewritten them

Revision ID: 0024
Revises: 0023
Position: 23 (file names give the run order; revision ids stay as stored, docs/decisions.md §23)

On PostgreSQL an erasure's old row versions keep the person's name and email in the table's and
its indexes' files until the table is rewritten (docs/decisions.md §15). If anyone was erased
before this revision, the tables erasure writes (as of this revision) are rewritten once too.
"""

import sqlalchemy as sa
from alembic import op

import kindling.migrations.frozen_types

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None

# The tables an erasure changes or deletes rows of, as of this revision.
ERASURE_TABLES = (
    "api_tokens",
    "attestations",
    "directory_group_members",
    "donations",
    "giving_requests",
    "kindness_acts",
    "scim_users",
    "sessions",
    "users",
    "verification_decisions",
    "volunteer_check_ins",
    "wellbeing_responses",
)


def upgrade() -> None:
    op.create_table(
        "storage_cleanups",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("table_name", sa.String(length=63), nullable=False),
        sa.Column("transaction_id", sa.BigInteger(), nullable=False),
        sa.Column("requested_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_storage_cleanups")),
    )
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            sa.text(
                "INSERT INTO storage_cleanups (id, table_name, transaction_id, requested_at) "
                "SELECT gen_random_uuid()::text, t.name, CAST(CAST(pg_current_xact_id() AS text) AS bigint), now() "
                "FROM unnest(CAST(:tables AS text[])) AS t(name) "
                "WHERE EXISTS (SELECT 1 FROM users WHERE erased_at IS NOT NULL)"
            ).bindparams(tables=list(ERASURE_TABLES))
        )


def downgrade() -> None:
    op.drop_table("storage_cleanups")
