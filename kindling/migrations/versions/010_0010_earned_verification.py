"""earned verification

Revision ID: 0010
Revises: 0009
Position: 10 (file names give the run order; revision ids stay as stored, docs/decisions.md §23)

Acts recorded before this revision only declared their level: none was evidenced, so each
starts at verified level 1, keeping its declared level as the requested one. Ripple scores and
the statistics tallies are sums over verified levels, so the tallies' verification sums become
the number of acts (ripple counts do not depend on levels and stay as they are).
"""

import sqlalchemy as sa
from alembic import op

import kindling.migrations.frozen_types

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "attestations",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("act_id", sa.String(length=36), nullable=False),
        sa.Column("level", sa.SmallInteger(), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("requested_by", sa.String(length=36), nullable=False),
        sa.Column("attester_name", sa.String(length=200), nullable=False),
        sa.Column("attester_organization", sa.String(length=200), nullable=True),
        sa.Column("attester_email", sa.String(length=254), nullable=True),
        sa.Column("created_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("expires_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("answered_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=True),
        sa.Column("answer_name", sa.String(length=200), nullable=True),
        sa.Column("answer_organization", sa.String(length=200), nullable=True),
        sa.Column("answer_statement", sa.String(length=2000), nullable=True),
        sa.ForeignKeyConstraint(["act_id"], ["kindness_acts.id"], name=op.f("fk_attestations_act_id_kindness_acts")),
        sa.ForeignKeyConstraint(["requested_by"], ["users.id"], name=op.f("fk_attestations_requested_by_users")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_attestations")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_attestations_token_hash")),
    )
    with op.batch_alter_table("attestations", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_attestations_act_id"), ["act_id"], unique=False)

    op.create_table(
        "verification_decisions",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("act_id", sa.String(length=36), nullable=False),
        sa.Column("level", sa.SmallInteger(), nullable=False),
        sa.Column("decision", sa.String(length=16), nullable=False),
        sa.Column("decided_by", sa.String(length=36), nullable=True),
        sa.Column("attestation_id", sa.String(length=36), nullable=True),
        sa.Column("note", sa.String(length=1000), nullable=True),
        sa.Column("reference", sa.String(length=200), nullable=True),
        sa.Column("decided_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["act_id"], ["kindness_acts.id"], name=op.f("fk_verification_decisions_act_id_kindness_acts")
        ),
        sa.ForeignKeyConstraint(
            ["attestation_id"], ["attestations.id"], name=op.f("fk_verification_decisions_attestation_id_attestations")
        ),
        sa.ForeignKeyConstraint(["decided_by"], ["users.id"], name=op.f("fk_verification_decisions_decided_by_users")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_verification_decisions")),
        sa.UniqueConstraint("act_id", "level", name="uq_verification_decisions_act_level"),
    )

    # Every existing act: verified level 1, and a status worked out from its requested level alone
    # (no decisions exist yet). Level 2 awaits its recipient when that is a user of the organization.
    with op.batch_alter_table("kindness_acts", schema=None) as batch_op:
        batch_op.add_column(sa.Column("verified_level", sa.SmallInteger(), nullable=False, server_default="1"))
        batch_op.add_column(
            sa.Column("verification_status", sa.String(length=16), nullable=False, server_default="verified")
        )
        batch_op.add_column(sa.Column("verification_awaiting", sa.String(length=16), nullable=True))
    op.execute("""
        UPDATE kindness_acts SET
            verification_status = CASE WHEN verification_level = 1 THEN 'verified' ELSE 'pending' END,
            verification_awaiting = CASE verification_level
                WHEN 1 THEN NULL
                WHEN 2 THEN CASE WHEN EXISTS (
                    SELECT 1 FROM users
                    WHERE users.id = kindness_acts.recipient_id AND users.organization_id = kindness_acts.organization_id
                ) THEN 'recipient' ELSE 'external' END
                WHEN 3 THEN 'manager'
                WHEN 4 THEN 'admin'
                ELSE 'external'
            END
    """)
    with op.batch_alter_table("kindness_acts", schema=None) as batch_op:
        batch_op.alter_column("verified_level", server_default=None)
        batch_op.alter_column("verification_status", server_default=None)
        batch_op.drop_index("ix_kindness_acts_organization_created_evidence")
        batch_op.create_index(
            "ix_kindness_acts_organization_created_verified",
            ["organization_id", "created_at", "verified_level", "category"],
            unique=False,
        )
        batch_op.create_index(
            "ix_kindness_acts_organization_awaiting",
            ["organization_id", "verification_awaiting", "created_at", "id"],
            unique=False,
        )
    # Ripple scores and statistics now sum verified levels: 1 per act.
    op.execute("UPDATE kindness_tallies SET verification_sum = acts")


def downgrade() -> None:
    # Back to declared levels: the tallies sum the requested levels again.
    op.execute("""
        UPDATE kindness_tallies SET verification_sum = COALESCE((
            SELECT SUM(kindness_acts.verification_level) FROM kindness_acts
            WHERE kindness_acts.organization_id = kindness_tallies.organization_id
              AND kindness_acts.category = kindness_tallies.category
        ), 0)
    """)
    with op.batch_alter_table("kindness_acts", schema=None) as batch_op:
        batch_op.drop_index("ix_kindness_acts_organization_awaiting")
        batch_op.drop_index("ix_kindness_acts_organization_created_verified")
        batch_op.create_index(
            "ix_kindness_acts_organization_created_evidence",
            ["organization_id", "created_at", "verification_level", "category"],
            unique=False,
        )
        batch_op.drop_column("verification_awaiting")
        batch_op.drop_column("verification_status")
        batch_op.drop_column("verified_level")
    op.drop_table("verification_decisions")
    with op.batch_alter_table("attestations", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_attestations_act_id"))
    op.drop_table("attestations")
