"""attester mailboxes

Revision ID: 0027
Revises: 0026
Position: 26 (file names give the run order; revision ids stay as stored, docs/decisions.md §23)

An attestation keeps the attesterKey of its address from the request on, so that one mailbox's
answers are found by key. Requests made before get the key their answers were logged with: the
hash of the organization id and the lower-cased address as stored (a frozen copy of that rule).
An erased person keeps a keyed hash of their mailbox; people erased before have none.
"""

import hashlib

import sqlalchemy as sa
from alembic import op

revision = "0027"
down_revision = "0026"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("attestations", schema=None) as batch_op:
        batch_op.add_column(sa.Column("attester_key", sa.String(length=64), nullable=True))
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.add_column(sa.Column("erased_mailbox_key", sa.String(length=64), nullable=True))
        batch_op.create_index(batch_op.f("ix_users_erased_mailbox_key"), ["erased_mailbox_key"], unique=False)
    connection = op.get_bind()
    rows = connection.execute(
        sa.text(
            "SELECT attestations.id, kindness_acts.organization_id, attestations.attester_email FROM attestations"
            " JOIN kindness_acts ON kindness_acts.id = attestations.act_id WHERE attestations.attester_email IS NOT NULL"
        )
    ).all()
    for attestation_id, organization_id, address in rows:
        key = hashlib.sha256(f"{organization_id}\n{address.lower()}".encode()).hexdigest()
        connection.execute(
            sa.text("UPDATE attestations SET attester_key = :key WHERE id = :id"), {"key": key, "id": attestation_id}
        )


def downgrade() -> None:
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_users_erased_mailbox_key"))
        batch_op.drop_column("erased_mailbox_key")
    with op.batch_alter_table("attestations", schema=None) as batch_op:
        batch_op.drop_column("attester_key")
