"""wellbeing weeks: published figures per organization and calendar week

Revision ID: 0008
Revises: 0007
Position: 8 (file names give the run order; revision ids stay as stored, docs/decisions.md §23)

Existing responses are replayed in the order they were given, as if each had just been
recorded: a week is published when 5 distinct people have answered since its last
publication (or ever), from all its answers so far, and nothing else is published.
The rule is written out here rather than imported, so that this revision keeps doing what
it did when the service changes.
"""

import datetime as dt

import sqlalchemy as sa
from alembic import op

import kindling.migrations.frozen_types

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

MINIMUM_GROUP_SIZE = 5
SENTIMENT_LABELS = ("positive", "neutral", "negative")


def upgrade() -> None:
    op.create_table(
        "wellbeing_weeks",
        sa.Column("organization_id", sa.String(length=36), nullable=False),
        sa.Column("week_start", sa.Date(), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("published_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=True),
        sa.Column("respondents", sa.Integer(), nullable=False),
        sa.Column("responses", sa.Integer(), nullable=False),
        sa.Column("mood_total", sa.Integer(), nullable=False),
        sa.Column("stress_total", sa.Integer(), nullable=False),
        sa.Column("energy_total", sa.Integer(), nullable=False),
        sa.Column("energy_responses", sa.Integer(), nullable=False),
        sa.Column("positive", sa.Integer(), nullable=False),
        sa.Column("neutral", sa.Integer(), nullable=False),
        sa.Column("negative", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_id"], ["organizations.id"], name=op.f("fk_wellbeing_weeks_organization_id_organizations")
        ),
        sa.PrimaryKeyConstraint("organization_id", "week_start", name=op.f("pk_wellbeing_weeks")),
    )
    with op.batch_alter_table("wellbeing_responses", schema=None) as batch_op:
        batch_op.add_column(sa.Column("week_start", sa.Date(), nullable=True))
        batch_op.add_column(sa.Column("published_in", sa.Integer(), nullable=True))

    _replay(op.get_bind())

    with op.batch_alter_table("wellbeing_responses", schema=None) as batch_op:
        batch_op.alter_column("week_start", existing_type=sa.Date(), nullable=False)
        batch_op.create_index(
            "ix_wellbeing_responses_organization_id_week_start",
            ["organization_id", "week_start", "published_in"],
            unique=False,
        )


def downgrade() -> None:
    with op.batch_alter_table("wellbeing_responses", schema=None) as batch_op:
        batch_op.drop_index("ix_wellbeing_responses_organization_id_week_start")
        batch_op.drop_column("published_in")
        batch_op.drop_column("week_start")
    op.drop_table("wellbeing_weeks")


responses = sa.table(
    "wellbeing_responses",
    sa.column("id", sa.String),
    sa.column("organization_id", sa.String),
    sa.column("user_id", sa.String),
    sa.column("mood", sa.Integer),
    sa.column("stress", sa.Integer),
    sa.column("energy", sa.Integer),
    sa.column("comment", sa.String),
    sa.column("sentiment_label", sa.String),
    sa.column("created_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True)),
    sa.column("week_start", sa.Date),
    sa.column("published_in", sa.Integer),
)
weeks = sa.table(
    "wellbeing_weeks",
    *(
        sa.column(name, sa.Integer)
        for name in (
            "revision",
            "respondents",
            "responses",
            "mood_total",
            "stress_total",
            "energy_total",
            "energy_responses",
            *SENTIMENT_LABELS,
        )
    ),
    sa.column("organization_id", sa.String),
    sa.column("week_start", sa.Date),
    sa.column("published_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True)),
)


def _replay(connection: sa.Connection) -> None:
    answers = connection.execute(sa.select(responses).order_by(responses.c.created_at, responses.c.id)).mappings().all()
    replayed: dict[tuple[str, dt.date], dict] = {}
    for answer in answers:
        day = answer["created_at"].astimezone(dt.UTC).date()
        key = (answer["organization_id"], day - dt.timedelta(days=day.weekday()))
        week = replayed.setdefault(key, {"answers": [], "pending": [], "revision": 0, "figures": None})
        week["answers"].append(answer)
        week["pending"].append(answer)
        _set(connection, [answer["id"]], week_start=key[1])
        if len({pending["user_id"] for pending in week["pending"]}) >= MINIMUM_GROUP_SIZE:
            week["revision"] += 1
            week["figures"] = _figures(week["answers"], published_at=answer["created_at"])
            _set(connection, [pending["id"] for pending in week["pending"]], published_in=week["revision"])
            week["pending"] = []
    for (organization_id, week_start), week in replayed.items():
        connection.execute(
            sa.insert(weeks).values(
                organization_id=organization_id,
                week_start=week_start,
                revision=week["revision"],
                **(week["figures"] or _figures([], published_at=None)),
            )
        )


def _set(connection: sa.Connection, response_ids: list[str], **values: object) -> None:
    connection.execute(sa.update(responses).where(responses.c.id.in_(response_ids)).values(**values))


def _figures(answers: list, *, published_at: dt.datetime | None) -> dict:
    energies = [answer["energy"] for answer in answers if answer["energy"] is not None]
    commented = [answer["sentiment_label"] for answer in answers if answer["comment"] is not None]
    return {
        "published_at": published_at,
        "respondents": len({answer["user_id"] for answer in answers}),
        "responses": len(answers),
        "mood_total": sum(answer["mood"] for answer in answers),
        "stress_total": sum(answer["stress"] for answer in answers),
        "energy_total": sum(energies),
        "energy_responses": len(energies),
        **{label: commented.count(label) for label in SENTIMENT_LABELS},
    }
