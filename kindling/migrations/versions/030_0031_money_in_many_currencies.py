"""money in many currencies: the organization's reporting currency and locale, each giving
program's currency, and the ECB reference rates

Revision ID: 0031
Revises: 0030
Position: 30 (file names give the run order; revision ids stay as stored, docs/decisions.md §23)

The organization's one currency becomes its reporting currency, unchanged, and each giving program
takes its organization's currency: every amount stored before is in the same currency as before,
so every figure, and every report issued before, stays as it was.
"""

import sqlalchemy as sa
from alembic import op

import kindling.migrations.frozen_types

revision = "0031"
down_revision = "0030"
branch_labels = None
depends_on = None

organizations = sa.table("organizations", sa.column("id", sa.String), sa.column("reporting_currency", sa.String))
programs = sa.table("giving_programs", sa.column("organization_id", sa.String), sa.column("currency", sa.String))


def upgrade() -> None:
    with op.batch_alter_table("organizations", schema=None) as batch_op:
        batch_op.alter_column("currency", new_column_name="reporting_currency", existing_type=sa.String(3))
        batch_op.add_column(sa.Column("locale", sa.String(length=35), server_default="en", nullable=False))
    with op.batch_alter_table("giving_programs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("currency", sa.String(length=3), nullable=True))
    op.get_bind().execute(
        sa.update(programs).values(
            currency=sa.select(organizations.c.reporting_currency)
            .where(organizations.c.id == programs.c.organization_id)
            .scalar_subquery()
        )
    )
    with op.batch_alter_table("giving_programs", schema=None) as batch_op:
        batch_op.alter_column("currency", existing_type=sa.String(length=3), nullable=False)
    op.create_table(
        "exchange_rates",
        sa.Column("currency", sa.String(length=3), nullable=False),
        sa.Column("rate_date", sa.Date(), nullable=False),
        sa.Column("rate", sa.String(length=32), nullable=False),
        sa.PrimaryKeyConstraint("currency", "rate_date", name=op.f("pk_exchange_rates")),
    )
    op.create_table(
        "rate_imports",
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("source", sa.String(length=255), nullable=False),
        sa.Column("imported_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("digest", name=op.f("pk_rate_imports")),
    )


def downgrade() -> None:
    op.drop_table("rate_imports")
    op.drop_table("exchange_rates")
    with op.batch_alter_table("giving_programs", schema=None) as batch_op:
        batch_op.drop_column("currency")
    with op.batch_alter_table("organizations", schema=None) as batch_op:
        batch_op.drop_column("locale")
        batch_op.alter_column("reporting_currency", new_column_name="currency", existing_type=sa.String(3))
