"""evidence log

Revision ID: 0011
Revises: 0010
Position: 11 (file names give the run order; revision ids stay as stored, docs/decisions.md §23)

The evidence tables, the PostgreSQL trigger that keeps events append-only, and one
`imported` event for every act, check-in and donation recorded before the log began.
"""

import datetime as dt
from collections.abc import Iterator

import sqlalchemy as sa
from alembic import op

import kindling.migrations.frozen_types
from kindling.migrations.frozen_hashing import GENESIS_HASH, event_hash, timestamp

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

UTC = kindling.migrations.frozen_types.UTCDateTime(timezone=True)
BATCH = 1000

APPEND_ONLY = """
CREATE FUNCTION evidence_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% on % refused: the evidence log is append-only', TG_OP, TG_TABLE_NAME
    USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER evidence_events_no_update_delete BEFORE UPDATE OR DELETE ON evidence_events
  FOR EACH ROW EXECUTE FUNCTION evidence_events_append_only();
CREATE TRIGGER evidence_events_no_truncate BEFORE TRUNCATE ON evidence_events
  FOR EACH STATEMENT EXECUTE FUNCTION evidence_events_append_only();
"""


def upgrade() -> None:
    op.create_table(
        "evidence_events",
        sa.Column("organization_id", sa.String(length=36), nullable=False),
        sa.Column("seq", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("type", sa.String(length=64), nullable=False),
        sa.Column("subject_kind", sa.String(length=32), nullable=False),
        sa.Column("subject_id", sa.String(length=64), nullable=False),
        sa.Column("actor_id", sa.String(length=36), nullable=True),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.Column("occurred_at", UTC, nullable=False),
        sa.Column("prev_hash", sa.String(length=64), nullable=False),
        sa.Column("hash", sa.String(length=64), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_id"], ["organizations.id"], name=op.f("fk_evidence_events_organization_id_organizations")
        ),
        sa.PrimaryKeyConstraint("organization_id", "seq", name=op.f("pk_evidence_events")),
    )
    with op.batch_alter_table("evidence_events", schema=None) as batch_op:
        batch_op.create_index(
            "ix_evidence_events_organization_id_occurred_at", ["organization_id", "occurred_at", "seq"], unique=False
        )
        batch_op.create_index(
            "ix_evidence_events_organization_id_subject_id", ["organization_id", "subject_id", "seq"], unique=False
        )
    op.create_table(
        "evidence_heads",
        sa.Column("organization_id", sa.String(length=36), nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("hash", sa.String(length=64), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_id"], ["organizations.id"], name=op.f("fk_evidence_heads_organization_id_organizations")
        ),
        sa.PrimaryKeyConstraint("organization_id", name=op.f("pk_evidence_heads")),
    )
    if op.get_context().dialect.name == "postgresql":
        op.execute(APPEND_ONLY)
    _import_existing_records()


def downgrade() -> None:
    if op.get_context().dialect.name == "postgresql":
        op.execute("DROP TRIGGER evidence_events_no_truncate ON evidence_events")
        op.execute("DROP TRIGGER evidence_events_no_update_delete ON evidence_events")
        op.execute("DROP FUNCTION evidence_events_append_only()")
    op.drop_table("evidence_heads")
    with op.batch_alter_table("evidence_events", schema=None) as batch_op:
        batch_op.drop_index("ix_evidence_events_organization_id_subject_id")
        batch_op.drop_index("ix_evidence_events_organization_id_occurred_at")
    op.drop_table("evidence_events")


acts = sa.table(
    "kindness_acts",
    sa.column("id"),
    sa.column("organization_id"),
    sa.column("created_at", UTC),
    sa.column("verification_level"),
    sa.column("category"),
)
check_ins = sa.table(
    "volunteer_check_ins",
    sa.column("id"),
    sa.column("organization_id"),
    sa.column("checked_in_at", UTC),
    sa.column("opportunity_id"),
    sa.column("distance_meters"),
    sa.column("verified"),
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


def _records(connection: sa.Connection, organization_id: str) -> Iterator[tuple[dt.datetime, str, str, dict]]:
    """(recordedAt, kind, id, data) of the organization's records, oldest first."""
    for row in connection.execute(sa.select(acts).where(acts.c.organization_id == organization_id)):
        yield row.created_at, "act", row.id, {"requestedLevel": row.verification_level, "category": row.category}
    for row in connection.execute(sa.select(check_ins).where(check_ins.c.organization_id == organization_id)):
        data = {
            "opportunityId": row.opportunity_id,
            "distanceMeters": round(row.distance_meters, 1),
            "verified": bool(row.verified),
        }
        yield row.checked_in_at, "check_in", row.id, data
    for row in connection.execute(sa.select(donations).where(donations.c.organization_id == organization_id)):
        yield row.created_at, "donation", row.id, {"amount": row.amount, "currency": row.currency, "status": row.status}


def _import_existing_records() -> None:
    """Chain one `imported` event per record, per organization. Their `occurredAt` is now, when
    the log first saw them; `recordedAt` is the time the record itself claims."""
    connection = op.get_bind()
    now = dt.datetime.now(dt.UTC)
    organization_ids = (
        connection.execute(
            sa.select(acts.c.organization_id).union(
                sa.select(check_ins.c.organization_id), sa.select(donations.c.organization_id)
            )
        )
        .scalars()
        .all()
    )
    for organization_id in sorted(organization_ids):
        records = sorted(_records(connection, organization_id), key=lambda record: record[:3])
        prev_hash, batch = GENESIS_HASH, []
        for seq, (recorded_at, kind, record_id, data) in enumerate(records, start=1):
            event = {
                "seq": seq,
                "organizationId": organization_id,
                "type": "imported",
                "subject": {"kind": kind, "id": record_id},
                "actorId": None,
                "data": {"recordedAt": timestamp(recorded_at), **data},
                "occurredAt": timestamp(now),
                "prevHash": prev_hash,
            }
            prev_hash = event_hash(event)
            batch.append(
                {
                    "organization_id": organization_id,
                    "seq": seq,
                    "type": "imported",
                    "subject_kind": kind,
                    "subject_id": record_id,
                    "actor_id": None,
                    "data": event["data"],
                    "occurred_at": now,
                    "prev_hash": event["prevHash"],
                    "hash": prev_hash,
                }
            )
            if len(batch) == BATCH:
                connection.execute(events.insert(), batch)
                batch = []
        if batch:
            connection.execute(events.insert(), batch)
        connection.execute(heads.insert().values(organization_id=organization_id, seq=len(records), hash=prev_hash))
