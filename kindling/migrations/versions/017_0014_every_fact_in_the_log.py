"""every counted fact in the log

Revision ID: 0014
Revises: 0013
Position: 17 (file names give the run order; revision ids stay as stored, docs/decisions.md §23)

Check-ins get a check-out; existing ones keep the hours they had. Every act, check-in and
donation then gets one `imported` event carrying every fact a report counts (an act's content
digest, creation time and decisions; a check-in's time, person, verification and hours; a
donation's time, amount and status; a published wellbeing week's figures), so the log holds
what the tables hold from now on.
Signed checkpoints get their table, and on PostgreSQL a trigger lets an `evidence_heads` row
only advance to the event just appended.
"""

import datetime as dt
import hashlib
from collections.abc import Iterator

import sqlalchemy as sa
from alembic import op

import kindling.migrations.frozen_types
from kindling.migrations.frozen_hashing import GENESIS_HASH, canonical, event_hash, timestamp

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

UTC = kindling.migrations.frozen_types.UTCDateTime(timezone=True)
BATCH = 1000

ADVANCE_ONLY = """
CREATE FUNCTION evidence_heads_advance_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' AND NEW.seq = 0 AND NEW.hash = repeat('0', 64) THEN
    RETURN NEW;
  END IF;
  IF TG_OP = 'UPDATE' AND NEW.organization_id = OLD.organization_id THEN
    -- Appends lock the row with an update that changes nothing.
    IF NEW.seq = OLD.seq AND NEW.hash = OLD.hash THEN
      RETURN NEW;
    END IF;
    IF NEW.seq = OLD.seq + 1 AND EXISTS (
      SELECT 1 FROM evidence_events e
      WHERE e.organization_id = NEW.organization_id AND e.seq = NEW.seq
        AND e.hash = NEW.hash AND e.prev_hash = OLD.hash
    ) THEN
      RETURN NEW;
    END IF;
  END IF;
  RAISE EXCEPTION '% on evidence_heads refused: a head only advances to the event just appended', TG_OP
    USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER evidence_heads_advance_only BEFORE INSERT OR UPDATE OR DELETE ON evidence_heads
  FOR EACH ROW EXECUTE FUNCTION evidence_heads_advance_only();
CREATE TRIGGER evidence_heads_no_truncate BEFORE TRUNCATE ON evidence_heads
  FOR EACH STATEMENT EXECUTE FUNCTION evidence_events_append_only();
"""


def upgrade() -> None:
    with op.batch_alter_table("volunteer_check_ins", schema=None) as batch_op:
        batch_op.add_column(sa.Column("checked_out_at", UTC, nullable=True))
        batch_op.create_index("ix_volunteer_check_ins_organization_id_id", ["organization_id", "id"], unique=False)
    with op.batch_alter_table("kindness_acts", schema=None) as batch_op:
        batch_op.create_index("ix_kindness_acts_organization_id_id", ["organization_id", "id"], unique=False)
    with op.batch_alter_table("donations", schema=None) as batch_op:
        batch_op.create_index("ix_donations_organization_id_id", ["organization_id", "id"], unique=False)
    op.create_table(
        "evidence_checkpoints",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("organization_id", sa.String(length=36), nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("hash", sa.String(length=64), nullable=False),
        sa.Column("at", UTC, nullable=False),
        sa.Column("key_id", sa.String(length=16), nullable=False),
        sa.Column("signature", sa.String(length=100), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_evidence_checkpoints_organization_id_organizations"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_evidence_checkpoints")),
    )
    with op.batch_alter_table("evidence_checkpoints", schema=None) as batch_op:
        batch_op.create_index(
            "ix_evidence_checkpoints_organization_id_at", ["organization_id", "at", "id"], unique=False
        )
    _import_facts()
    if op.get_context().dialect.name == "postgresql":
        op.execute(ADVANCE_ONLY)


def downgrade() -> None:
    if op.get_context().dialect.name == "postgresql":
        op.execute("DROP TRIGGER evidence_heads_no_truncate ON evidence_heads")
        op.execute("DROP TRIGGER evidence_heads_advance_only ON evidence_heads")
        op.execute("DROP FUNCTION evidence_heads_advance_only()")
    with op.batch_alter_table("evidence_checkpoints", schema=None) as batch_op:
        batch_op.drop_index("ix_evidence_checkpoints_organization_id_at")
    op.drop_table("evidence_checkpoints")
    with op.batch_alter_table("donations", schema=None) as batch_op:
        batch_op.drop_index("ix_donations_organization_id_id")
    with op.batch_alter_table("kindness_acts", schema=None) as batch_op:
        batch_op.drop_index("ix_kindness_acts_organization_id_id")
    with op.batch_alter_table("volunteer_check_ins", schema=None) as batch_op:
        batch_op.drop_index("ix_volunteer_check_ins_organization_id_id")
        batch_op.drop_column("checked_out_at")


acts = sa.table(
    "kindness_acts",
    sa.column("id"),
    sa.column("organization_id"),
    sa.column("created_at", UTC),
    sa.column("verification_level"),
    sa.column("category"),
    sa.column("description"),
    sa.column("media", sa.JSON),
)
decisions = sa.table("verification_decisions", sa.column("act_id"), sa.column("level"), sa.column("decision"))
check_ins = sa.table(
    "volunteer_check_ins",
    sa.column("id"),
    sa.column("organization_id"),
    sa.column("checked_in_at", UTC),
    sa.column("opportunity_id"),
    sa.column("user_id"),
    sa.column("verified"),
    sa.column("hours"),
)
donations = sa.table(
    "donations",
    sa.column("id"),
    sa.column("organization_id"),
    sa.column("created_at", UTC),
    sa.column("amount"),
    sa.column("currency"),
    sa.column("status"),
)
events = sa.table(
    "evidence_events",
    sa.column("organization_id"),
    sa.column("seq"),
    sa.column("type"),
    sa.column("subject_kind"),
    sa.column("subject_id"),
    sa.column("actor_id"),
    sa.column("data", sa.JSON),
    sa.column("occurred_at", UTC),
    sa.column("prev_hash"),
    sa.column("hash"),
)
heads = sa.table("evidence_heads", sa.column("organization_id"), sa.column("seq"), sa.column("hash"))
weeks = sa.table(
    "wellbeing_weeks",
    sa.column("organization_id"),
    sa.column("week_start"),
    sa.column("revision"),
    sa.column("respondents"),
    sa.column("responses"),
    sa.column("mood_average"),
    sa.column("stress_average"),
    sa.column("energy_average"),
    sa.column("energy_respondents"),
    sa.column("positive"),
    sa.column("neutral"),
    sa.column("negative"),
    sa.column("epsilon"),
)
# The noise of publications since 0017 (kindling/wellbeing/noise.py), as `wellbeing.published` names it.
MECHANISM = "laplace"


def _digest(description: str, category: str, media: list) -> str:
    # The content digest as this revision defined it (docs/evidence.md).
    return hashlib.sha256(canonical({"description": description, "category": category, "media": media})).hexdigest()


def _records(connection: sa.Connection, organization_id: str) -> Iterator[tuple[str, str, dict]]:
    """(kind, id, data) of the organization's records, each kind oldest first."""
    for row in connection.execute(
        sa.select(acts).where(acts.c.organization_id == organization_id).order_by(acts.c.created_at, acts.c.id)
    ):
        decided = connection.execute(
            sa.select(decisions.c.level, decisions.c.decision).where(decisions.c.act_id == row.id)
        )
        yield (
            "act",
            row.id,
            {
                "recordedAt": timestamp(row.created_at),
                "requestedLevel": row.verification_level,
                "category": row.category,
                "contentDigest": _digest(row.description, row.category, row.media or []),
                "decisions": {str(level): decision for level, decision in decided},
            },
        )
    for row in connection.execute(
        sa.select(check_ins)
        .where(check_ins.c.organization_id == organization_id)
        .order_by(check_ins.c.checked_in_at, check_ins.c.id)
    ):
        yield (
            "check_in",
            row.id,
            {
                "recordedAt": timestamp(row.checked_in_at),
                "opportunityId": row.opportunity_id,
                "userId": row.user_id,
                "verified": bool(row.verified),
                "hours": row.hours,
            },
        )
    for row in connection.execute(
        sa.select(donations)
        .where(donations.c.organization_id == organization_id)
        .order_by(donations.c.created_at, donations.c.id)
    ):
        yield (
            "donation",
            row.id,
            {
                "recordedAt": timestamp(row.created_at),
                "amount": row.amount,
                "currency": row.currency,
                "status": row.status,
            },
        )
    for row in connection.execute(
        sa.select(weeks)
        .where(weeks.c.organization_id == organization_id, weeks.c.revision > 0)
        .order_by(weeks.c.week_start)
    ):
        week_start = row.week_start if isinstance(row.week_start, str) else row.week_start.isoformat()
        # The week's figures as published, in the shape of its `wellbeing.published` event.
        yield (
            "wellbeing_week",
            week_start,
            {
                "weekStart": week_start,
                "revision": row.revision,
                "respondents": row.respondents,
                "responses": row.responses,
                "averages": {"mood": row.mood_average, "stress": row.stress_average, "energy": row.energy_average},
                "energyRespondents": row.energy_respondents,
                "sentiment": None
                if row.positive is None
                else {
                    "positive": row.positive,
                    "neutral": row.neutral,
                    "negative": row.negative,
                },
                "privacy": {"epsilon": row.epsilon, "mechanism": MECHANISM if row.epsilon else None},
            },
        )


def _import_facts() -> None:
    """Chain one `imported` event per record onto its organization's log."""
    connection = op.get_bind()
    now = dt.datetime.now(dt.UTC)
    organization_ids = (
        connection.execute(
            sa.select(acts.c.organization_id).union(
                sa.select(check_ins.c.organization_id),
                sa.select(donations.c.organization_id),
                sa.select(weeks.c.organization_id).where(weeks.c.revision > 0),
            )
        )
        .scalars()
        .all()
    )
    for organization_id in sorted(organization_ids):
        last = connection.execute(
            sa.select(events.c.seq, events.c.hash)
            .where(events.c.organization_id == organization_id)
            .order_by(events.c.seq.desc())
            .limit(1)
        ).one_or_none()
        seq, prev_hash = (last.seq, last.hash) if last else (0, GENESIS_HASH)
        batch = []
        for kind, record_id, data in list(_records(connection, organization_id)):
            seq += 1
            event = {
                "seq": seq,
                "organizationId": organization_id,
                "type": "imported",
                "subject": {"kind": kind, "id": record_id},
                "actorId": None,
                "data": data,
                "occurredAt": timestamp(now),
                "prevHash": prev_hash,
            }
            hash_ = event_hash(event)
            batch.append(
                {
                    "organization_id": organization_id,
                    "seq": seq,
                    "type": "imported",
                    "subject_kind": kind,
                    "subject_id": record_id,
                    "actor_id": None,
                    "data": data,
                    "occurred_at": now,
                    "prev_hash": prev_hash,
                    "hash": hash_,
                }
            )
            prev_hash = hash_
            if len(batch) == BATCH:
                connection.execute(events.insert(), batch)
                batch = []
        if batch:
            connection.execute(events.insert(), batch)
        if last is None:
            connection.execute(heads.insert().values(organization_id=organization_id, seq=seq, hash=prev_hash))
        else:
            connection.execute(
                heads.update().where(heads.c.organization_id == organization_id).values(seq=seq, hash=prev_hash)
            )
