"""one person, one level; attestations mailed by Kindling

Revision ID: 0013
Revises: 0016
Position: 16 (file names give the run order; revision ids stay as stored, docs/decisions.md §23)

- Organizations may turn joining by code off (`join_code_enabled`, on for every existing one).
- Attestations record the attester's domain, when the mail was delivered and when a newer
  request replaced them. Requests made before keep their tokens, which only their requesters
  ever held: each open one is cancelled, so that only a mailed request can be answered.
- Recipient ids are stored canonically: a UUID written in another form (capitals, braces, no
  hyphens) becomes the lowercase hyphenated form, with the acts' ripple counts and the
  statistics tallies settled again for the acts it concerns.
- A standing dispute counts as level 1: every act whose recipient disputed it (or declined its
  attestation of level 2) and which no admin approved at level 4 since goes back to verified
  level 1, with its status and the tallies' verification sums.

The rules are copied here as they were applied, not imported from the running code.
"""

import collections
import datetime as dt
import uuid

import sqlalchemy as sa
from alembic import op

import kindling.migrations.frozen_types

revision = "0013"
down_revision = "0016"
branch_labels = None
depends_on = None

RIPPLE_WINDOW = dt.timedelta(days=30)
RIPPLE_CAP = 10
POSITIVE = ("confirm", "approve")
DISPUTES = ("dispute", "decline")
AWAITING = {2: "recipient", 3: "manager", 4: "admin", 5: "external"}
ACTS = sa.table(
    "kindness_acts",
    sa.column("id", sa.String()),
    sa.column("organization_id", sa.String()),
    sa.column("user_id", sa.String()),
    sa.column("recipient_id", sa.String()),
    sa.column("category", sa.String()),
    sa.column("ripple_count", sa.SmallInteger()),
    sa.column("created_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True)),
)


def upgrade() -> None:
    with op.batch_alter_table("organizations", schema=None) as batch_op:
        batch_op.add_column(sa.Column("join_code_enabled", sa.Boolean(), server_default="1", nullable=False))
    with op.batch_alter_table("attestations", schema=None) as batch_op:
        batch_op.add_column(sa.Column("attester_domain", sa.String(length=253), nullable=True))
        batch_op.add_column(
            sa.Column("delivered_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=True)
        )
        batch_op.add_column(
            sa.Column("cancelled_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=True)
        )
    connection = op.get_bind()
    now = dt.datetime.now(dt.UTC)
    connection.execute(sa.text("UPDATE attestations SET cancelled_at = :now WHERE answered_at IS NULL"), {"now": now})
    _canonical_recipients(connection)
    _standing_disputes(connection)


def _canonical(value: str) -> str:
    try:
        return str(uuid.UUID(value))
    except ValueError:
        return value


def _canonical_recipients(connection: sa.Connection) -> None:
    length = sa.func.length(ACTS.c.recipient_id)
    candidates = connection.execute(
        sa.select(
            ACTS.c.id,
            ACTS.c.organization_id,
            ACTS.c.recipient_id,
            ACTS.c.created_at,
            ACTS.c.category,
            ACTS.c.ripple_count,
        ).where(
            sa.or_(
                ACTS.c.recipient_id != sa.func.lower(ACTS.c.recipient_id), sa.and_(length != 36, length.between(32, 45))
            )
        )
    ).all()
    for act_id, organization_id, recipient_id, created_at, category, ripple_count in candidates:
        canonical = _canonical(recipient_id)
        if canonical == recipient_id:
            continue
        passed = (
            sa.select(ACTS.c.id)
            .where(
                ACTS.c.organization_id == organization_id,
                ACTS.c.user_id == canonical,
                ACTS.c.created_at > created_at,
                ACTS.c.created_at <= created_at + RIPPLE_WINDOW,
            )
            .limit(RIPPLE_CAP)
            .subquery()
        )
        passed_on = connection.execute(sa.select(sa.func.count()).select_from(passed)).scalar()
        connection.execute(
            sa.update(ACTS).where(ACTS.c.id == act_id).values(recipient_id=canonical, ripple_count=passed_on)
        )
        connection.execute(
            sa.text("""
            UPDATE kindness_tallies SET ripple_sum = ripple_sum + :delta
            WHERE organization_id = :organization AND category = :category
        """),
            {"delta": passed_on - ripple_count, "organization": organization_id, "category": category},
        )
        _count_recipient(connection, organization_id, recipient_id, -1)
        _count_recipient(connection, organization_id, canonical, 1)


def _count_recipient(connection: sa.Connection, organization_id: str, recipient_id: str, delta: int) -> None:
    changed = connection.execute(
        sa.text("""
        UPDATE kindness_recipient_tallies SET acts = acts + :delta
        WHERE organization_id = :organization AND recipient_id = :recipient
    """),
        {"delta": delta, "organization": organization_id, "recipient": recipient_id},
    )
    if changed.rowcount == 0:
        connection.execute(
            sa.text("""
            INSERT INTO kindness_recipient_tallies (organization_id, recipient_id, acts) VALUES (:organization, :recipient, :delta)
        """),
            {"delta": delta, "organization": organization_id, "recipient": recipient_id},
        )
    connection.execute(
        sa.text("""
        DELETE FROM kindness_recipient_tallies WHERE organization_id = :organization AND recipient_id = :recipient AND acts <= 0
    """),
        {"organization": organization_id, "recipient": recipient_id},
    )


def _standing_disputes(connection: sa.Connection) -> None:
    rows = connection.execute(
        sa.text("""
        SELECT a.id, a.organization_id, a.category, a.verification_level, a.verified_level, d.level, d.decision
        FROM kindness_acts a JOIN verification_decisions d ON d.act_id = a.id
        WHERE a.id IN (SELECT act_id FROM verification_decisions WHERE level = 2 AND decision IN ('dispute', 'decline'))
    """)
    ).all()
    acts = {}
    decisions: collections.defaultdict[str, dict[int, str]] = collections.defaultdict(dict)
    for act_id, organization_id, category, requested, verified, level, decision in rows:
        acts[act_id] = (organization_id, category, requested, verified)
        decisions[act_id][level] = decision
    for act_id, (organization_id, category, requested, verified) in acts.items():
        decided = decisions[act_id]
        upheld = decided.get(4) != "approve"
        level = 1 if upheld else max((lvl for lvl, d in decided.items() if d in POSITIVE), default=1)
        if level >= requested:
            status, awaiting = "verified", None
        elif requested > 2 and 4 not in decided:
            status, awaiting = "disputed", "admin"
        elif requested in decided or decided.get(4) == "reject":
            status, awaiting = ("disputed" if requested == 2 else "rejected"), None
        else:
            status, awaiting = "pending", AWAITING[requested]
        connection.execute(
            sa.text("""
            UPDATE kindness_acts SET verified_level = :level, verification_status = :status, verification_awaiting = :awaiting
            WHERE id = :id
        """),
            {"level": level, "status": status, "awaiting": awaiting, "id": act_id},
        )
        connection.execute(
            sa.text("""
            UPDATE kindness_tallies SET verification_sum = verification_sum + :delta
            WHERE organization_id = :organization AND category = :category
        """),
            {"delta": level - verified, "organization": organization_id, "category": category},
        )


def downgrade() -> None:
    # Canonical ids and dispute-bound levels stay: they are what the rows should always have said.
    with op.batch_alter_table("attestations", schema=None) as batch_op:
        batch_op.drop_column("cancelled_at")
        batch_op.drop_column("delivered_at")
        batch_op.drop_column("attester_domain")
    with op.batch_alter_table("organizations", schema=None) as batch_op:
        batch_op.drop_column("join_code_enabled")
