"""witnesses

Revision ID: 0032
Revises: 0031
Position: 31 (file names give the run order; revision ids stay as stored, docs/decisions.md §23)

The witnesses that cosign each organization's checkpoints (added by admins or by its consultants),
their verified cosignatures, and how many of them make a checkpoint witnessed. New tables only:
nothing stored changes.
"""

import sqlalchemy as sa
from alembic import op

import kindling.migrations.frozen_types

revision = "0032"
down_revision = "0031"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "evidence_witness_policies",
        sa.Column("organization_id", sa.String(length=36), nullable=False),
        sa.Column("quorum", sa.SmallInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_evidence_witness_policies_organization_id_organizations"),
        ),
        sa.PrimaryKeyConstraint("organization_id", name=op.f("pk_evidence_witness_policies")),
    )
    op.create_table(
        "evidence_witnesses",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("organization_id", sa.String(length=36), nullable=False),
        sa.Column("consultant_id", sa.String(length=36), nullable=True),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("url", sa.String(length=2048), nullable=False),
        sa.Column("verifier_key", sa.String(length=400), nullable=False),
        sa.Column("created_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("last_attempt_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=True),
        sa.Column("last_error", sa.String(length=300), nullable=True),
        sa.Column("fork_detected_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["organization_id"], ["organizations.id"], name=op.f("fk_evidence_witnesses_organization_id_organizations")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_evidence_witnesses")),
    )
    with op.batch_alter_table("evidence_witnesses", schema=None) as batch_op:
        batch_op.create_index("ix_evidence_witnesses_organization_id", ["organization_id", "created_at"], unique=False)

    op.create_table(
        "evidence_cosignatures",
        sa.Column("checkpoint_id", sa.String(length=36), nullable=False),
        sa.Column("witness_id", sa.String(length=36), nullable=False),
        sa.Column("name", sa.String(length=256), nullable=False),
        sa.Column("line", sa.String(length=512), nullable=False),
        sa.Column("timestamp", sa.BigInteger(), nullable=False),
        sa.Column("received_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["checkpoint_id"],
            ["evidence_checkpoints.id"],
            name=op.f("fk_evidence_cosignatures_checkpoint_id_evidence_checkpoints"),
        ),
        sa.PrimaryKeyConstraint("checkpoint_id", "witness_id", name=op.f("pk_evidence_cosignatures")),
    )


def downgrade() -> None:
    op.drop_table("evidence_cosignatures")
    with op.batch_alter_table("evidence_witnesses", schema=None) as batch_op:
        batch_op.drop_index("ix_evidence_witnesses_organization_id")

    op.drop_table("evidence_witnesses")
    op.drop_table("evidence_witness_policies")
