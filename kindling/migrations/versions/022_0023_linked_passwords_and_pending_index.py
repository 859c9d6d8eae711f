"""linked passwords and the pending index: SCIM sets only the password of an account it provisioned;
the acts of one sender that wait for a decision, in an index of their own

Revision ID: 0023
Revises: 0022
Position: 22 (file names give the run order; revision ids stay as stored, docs/decisions.md §23)

A SCIM record now says whether the directory's `password` is the person's. It is for the people
the directory created (their `member.joined` came from SCIM) and for accounts without a password
of their own; never for an account that had its own password when SCIM linked it.

The pending list reads a manager's reports' waiting acts from
ix_kindness_acts_organization_sender_awaiting, which holds waiting acts only. Built here in
about 8 s at 1,000,000 acts of which 800,000 wait, while writes to the acts wait for it.
"""

import sqlalchemy as sa
from alembic import op

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None

# Frozen: the placeholder hash of an account without a password of its own.
NO_PASSWORD = "!directory"


def upgrade() -> None:
    with op.batch_alter_table("scim_users") as batch:
        batch.add_column(sa.Column("sets_password", sa.Boolean(), server_default=sa.false(), nullable=False))
    source = (
        "evidence_events.data ->> 'source'"
        if op.get_context().dialect.name == "postgresql"
        else "json_extract(evidence_events.data, '$.source')"
    )
    op.execute(
        sa.text(
            "UPDATE scim_users SET sets_password = :yes WHERE EXISTS ("
            " SELECT 1 FROM users WHERE users.id = scim_users.user_id AND users.password_hash = :none)"
            " OR EXISTS (SELECT 1 FROM evidence_events WHERE evidence_events.organization_id = scim_users.organization_id"
            " AND evidence_events.subject_kind = 'member' AND evidence_events.subject_id = scim_users.user_id"
            f" AND evidence_events.type = 'member.joined' AND {source} = 'scim')"
        ).bindparams(yes=True, none=NO_PASSWORD)
    )
    op.create_index(
        "ix_kindness_acts_organization_sender_awaiting",
        "kindness_acts",
        ["organization_id", "user_id", "verification_awaiting", "created_at", "id"],
        postgresql_where=sa.text("verification_awaiting IS NOT NULL"),
        sqlite_where=sa.text("verification_awaiting IS NOT NULL"),
    )


def downgrade() -> None:
    op.drop_index("ix_kindness_acts_organization_sender_awaiting", table_name="kindness_acts")
    with op.batch_alter_table("scim_users") as batch:
        batch.drop_column("sets_password")
