"""personal data: erased people, and wellbeing weeks stored as published with the privacy budget they spent

Revision ID: 0017
Revises: 0018
Position: 13 (file names give the run order; revision ids stay as stored, docs/decisions.md §23)

Weeks published before this revision keep exactly the figures they were published with:
their sums become the averages they were served as (2 decimals, half up), and `epsilon`
stays null, as they carry no noise. Publications from now on store their noisy figures.
"""

from decimal import ROUND_HALF_UP, Decimal

import sqlalchemy as sa
from alembic import op

import kindling.migrations.frozen_types

revision = "0017"
down_revision = "0018"
branch_labels = None
depends_on = None

TOTALS = ("mood_total", "stress_total", "energy_total", "energy_responses")
LABELS = ("positive", "neutral", "negative")

weeks = sa.table(
    "wellbeing_weeks",
    sa.column("organization_id", sa.String),
    sa.column("week_start", sa.Date),
    sa.column("revision", sa.Integer),
    sa.column("responses", sa.Integer),
    sa.column("respondents", sa.Integer),
    *(sa.column(name, sa.Integer) for name in (*TOTALS, *LABELS)),
    *(sa.column(name, sa.Double) for name in ("mood_average", "stress_average", "energy_average")),
    sa.column("energy_respondents", sa.Integer),
)


def upgrade() -> None:
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("erased_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=True)
        )
    with op.batch_alter_table("wellbeing_weeks", schema=None) as batch_op:
        batch_op.add_column(sa.Column("mood_average", sa.Double(), nullable=True))
        batch_op.add_column(sa.Column("stress_average", sa.Double(), nullable=True))
        batch_op.add_column(sa.Column("energy_respondents", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("energy_average", sa.Double(), nullable=True))
        batch_op.add_column(sa.Column("epsilon", sa.Double(), nullable=True))
        for label in LABELS:
            batch_op.alter_column(label, existing_type=sa.Integer(), nullable=True)
    connection = op.get_bind()
    for week in connection.execute(sa.select(weeks)).mappings().all():
        published = week["revision"] > 0
        connection.execute(
            sa.update(weeks)
            .where(weeks.c.organization_id == week["organization_id"], weeks.c.week_start == week["week_start"])
            .values(
                mood_average=_average(week["mood_total"], week["responses"]) if published else None,
                stress_average=_average(week["stress_total"], week["responses"]) if published else None,
                energy_respondents=(week["energy_responses"] or None) if published else None,
                energy_average=_average(week["energy_total"], week["energy_responses"]) if published else None,
                **({} if published else dict.fromkeys(LABELS)),
            )
        )
    with op.batch_alter_table("wellbeing_weeks", schema=None) as batch_op:
        for name in TOTALS:
            batch_op.drop_column(name)


def downgrade() -> None:
    with op.batch_alter_table("wellbeing_weeks", schema=None) as batch_op:
        for name in TOTALS:
            batch_op.add_column(sa.Column(name, sa.Integer(), nullable=False, server_default="0"))
    connection = op.get_bind()
    for week in connection.execute(sa.select(weeks)).mappings().all():
        connection.execute(
            sa.update(weeks)
            .where(weeks.c.organization_id == week["organization_id"], weeks.c.week_start == week["week_start"])
            .values(
                mood_total=round((week["mood_average"] or 0) * week["responses"]),
                stress_total=round((week["stress_average"] or 0) * week["responses"]),
                energy_total=round((week["energy_average"] or 0) * (week["energy_respondents"] or 0)),
                energy_responses=week["energy_respondents"] or 0,
                **{label: week[label] or 0 for label in LABELS},
            )
        )
    with op.batch_alter_table("wellbeing_weeks", schema=None) as batch_op:
        for name in TOTALS:
            batch_op.alter_column(name, server_default=None)
        for label in LABELS:
            batch_op.alter_column(label, existing_type=sa.Integer(), nullable=False)
        for name in ("epsilon", "energy_average", "energy_respondents", "stress_average", "mood_average"):
            batch_op.drop_column(name)
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.drop_column("erased_at")


def _average(total: int, count: int) -> float | None:
    return None if not count else float((Decimal(total) / count).quantize(Decimal("0.01"), ROUND_HALF_UP))
