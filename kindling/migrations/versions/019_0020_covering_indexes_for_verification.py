"""covering indexes for verification

Revision ID: 0020
Revises: 0019
Position: 19 (file names give the run order; revision ids stay as stored, docs/decisions.md §23)

Verification reads every record a report counts in id order, and every event by subject. On
PostgreSQL those indexes now include the columns it reads, so the reads are index-only scans in
index order, not a random visit to the table for each row (at 1,000,000 acts a batch of 5,000
took 209 ms from the table and takes a few from the index). SQLite is left as it was.
"""

from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None

# (index, table, key columns, included columns)
INDEXES = (
    (
        "ix_kindness_acts_organization_id_id",
        "kindness_acts",
        ["organization_id", "id"],
        ["created_at", "category", "verification_level", "verified_level", "verification_status"],
    ),
    (
        "ix_volunteer_check_ins_organization_id_id",
        "volunteer_check_ins",
        ["organization_id", "id"],
        ["checked_in_at", "user_id", "verified", "hours"],
    ),
    (
        "ix_donations_organization_id_id",
        "donations",
        ["organization_id", "id"],
        ["created_at", "amount", "currency", "status"],
    ),
    (
        "ix_evidence_events_organization_id_subject_id",
        "evidence_events",
        ["organization_id", "subject_id", "seq"],
        ["subject_kind", "type", "actor_id", "data", "occurred_at", "prev_hash", "hash"],
    ),
)


def upgrade() -> None:
    if op.get_context().dialect.name == "postgresql":
        for name, table, columns, included in INDEXES:
            op.drop_index(name, table_name=table)
            op.create_index(name, table, columns, postgresql_include=included)


def downgrade() -> None:
    if op.get_context().dialect.name == "postgresql":
        for name, table, columns, _ in INDEXES:
            op.drop_index(name, table_name=table)
            op.create_index(name, table, columns)
