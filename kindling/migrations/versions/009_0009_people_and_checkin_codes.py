"""people and check-in codes

Revision ID: 0009
Revises: 0008
Position: 9 (file names give the run order; revision ids stay as stored, docs/decisions.md §23)
"""

import pyotp
import sqlalchemy as sa
from alembic import op

import kindling.migrations.frozen_types

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.create_index("ix_users_organization_id_name", ["organization_id", "name", "id"], unique=False)

    with op.batch_alter_table("volunteer_opportunities", schema=None) as batch_op:
        batch_op.add_column(sa.Column("require_code", sa.Boolean(), nullable=False, server_default=sa.false()))
        batch_op.add_column(sa.Column("code_secret", sa.String(length=32), nullable=True))
    # Every opportunity gets a secret of its own, so organisers of existing ones can show codes too.
    opportunities = sa.table("volunteer_opportunities", sa.column("id", sa.String), sa.column("code_secret", sa.String))
    connection = op.get_bind()
    for (opportunity_id,) in connection.execute(sa.select(opportunities.c.id)).all():
        connection.execute(
            opportunities.update().where(opportunities.c.id == opportunity_id).values(code_secret=pyotp.random_base32())
        )
    with op.batch_alter_table("volunteer_opportunities", schema=None) as batch_op:
        batch_op.alter_column("code_secret", existing_type=sa.String(length=32), nullable=False)

    with op.batch_alter_table("volunteer_check_ins", schema=None) as batch_op:
        batch_op.add_column(sa.Column("location_verified", sa.Boolean(), nullable=True))
        batch_op.add_column(sa.Column("code_verified", sa.Boolean(), nullable=True))
        batch_op.add_column(sa.Column("approved_by", sa.String(length=36), nullable=True))
        batch_op.add_column(
            sa.Column("approved_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=True)
        )
        batch_op.add_column(sa.Column("approval_note", sa.String(length=500), nullable=True))
        batch_op.create_foreign_key("fk_volunteer_check_ins_approved_by_users", "users", ["approved_by"], ["id"])
        batch_op.create_index(
            "ix_volunteer_check_ins_opportunity_id_checked_in_at",
            ["opportunity_id", "checked_in_at", "id"],
            unique=False,
        )
    # Until now a check-in was verified by its location alone.
    check_ins = sa.table(
        "volunteer_check_ins", sa.column("verified", sa.Boolean), sa.column("location_verified", sa.Boolean)
    )
    op.execute(check_ins.update().values(location_verified=check_ins.c.verified))
    with op.batch_alter_table("volunteer_check_ins", schema=None) as batch_op:
        batch_op.alter_column("location_verified", existing_type=sa.Boolean(), nullable=False)


def downgrade() -> None:
    with op.batch_alter_table("volunteer_check_ins", schema=None) as batch_op:
        batch_op.drop_index("ix_volunteer_check_ins_opportunity_id_checked_in_at")
        batch_op.drop_constraint("fk_volunteer_check_ins_approved_by_users", type_="foreignkey")
        batch_op.drop_column("approval_note")
        batch_op.drop_column("approved_at")
        batch_op.drop_column("approved_by")
        batch_op.drop_column("code_verified")
        batch_op.drop_column("location_verified")

    with op.batch_alter_table("volunteer_opportunities", schema=None) as batch_op:
        batch_op.drop_column("code_secret")
        batch_op.drop_column("require_code")

    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.drop_index("ix_users_organization_id_name")
