"""wellbeing weeks published once: the privacy budget each week's publications spent together

Revision ID: 0028
Revises: 0027
Position: 27 (file names give the run order; revision ids stay as stored, docs/decisions.md §23)

From this revision on a week is published once, after it ends, and spends ε = 1 once. A week
published before keeps its latest revision; `epsilon_spent` is what all its publications spent,
read from its events in the log: the sum of their ε, or null when one of them had no noise (its
figures were exact, so no budget bounds them).
"""

import sqlalchemy as sa
from alembic import op

revision = "0028"
down_revision = "0027"
branch_labels = None
depends_on = None

weeks = sa.table(
    "wellbeing_weeks",
    sa.column("organization_id", sa.String),
    sa.column("week_start", sa.Date),
    sa.column("revision", sa.Integer),
    sa.column("epsilon_spent", sa.Double),
)
events = sa.table(
    "evidence_events",
    sa.column("organization_id", sa.String),
    sa.column("seq", sa.BigInteger),
    sa.column("subject_kind", sa.String),
    sa.column("subject_id", sa.String),
    sa.column("data", sa.JSON),
)


def upgrade() -> None:
    with op.batch_alter_table("wellbeing_weeks", schema=None) as batch_op:
        batch_op.add_column(sa.Column("epsilon_spent", sa.Double(), nullable=True))
    connection = op.get_bind()
    spent: dict[tuple[str, str], list[float | None]] = {}
    for organization_id, subject_id, data in connection.execute(
        sa.select(events.c.organization_id, events.c.subject_id, events.c.data)
        .where(events.c.subject_kind == "wellbeing_week")
        .order_by(events.c.organization_id, events.c.seq)
    ):
        spent.setdefault((organization_id, subject_id), []).append((data.get("privacy") or {}).get("epsilon"))
    for week in connection.execute(sa.select(weeks).where(weeks.c.revision > 0)).mappings().all():
        monday = week["week_start"] if isinstance(week["week_start"], str) else week["week_start"].isoformat()
        budgets = spent.get((week["organization_id"], monday), [None])
        connection.execute(
            sa.update(weeks)
            .where(weeks.c.organization_id == week["organization_id"], weeks.c.week_start == week["week_start"])
            .values(epsilon_spent=None if None in budgets else sum(budgets))
        )


def downgrade() -> None:
    with op.batch_alter_table("wellbeing_weeks", schema=None) as batch_op:
        batch_op.drop_column("epsilon_spent")
