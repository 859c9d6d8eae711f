"""Reconciliation: every record a report counts against the facts its events imply (docs/evidence.md).

Verification reads each event once, here: the events of the records' kinds are hashed as they are
replayed, in the order of their records, and the chain's links are checked in SQL (log.verify).
Published wellbeing weeks are few (one an organization a week) and are compared here too; their
events are hashed with the log's others."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import sqlalchemy as sa
from sqlalchemy import select
from sqlalchemy.orm import Session

from kindling.evidence import replay
from kindling.evidence.chain import body_hash, event_body, event_hash, timestamp
from kindling.evidence.models import EvidenceEvent
from kindling.platform.base import UTCDateTime

_events = EvidenceEvent.__table__
# (the record's id, its facts the log implies, its facts in the table), None on the side that has none.
Difference = tuple[str, dict | None, dict | None]


def _common() -> tuple:
    return sa.column("id"), sa.column("organization_id")


# The records whose facts reports count, with the columns that hold them. The evidence slice lies
# below the slices that own these tables, so it names the columns rather than import the models.
_RECORDS = {
    "act": sa.table(
        "kindness_acts",
        *_common(),
        sa.column("created_at", UTCDateTime()),
        sa.column("category"),
        sa.column("verification_level"),
        sa.column("verified_level"),
        sa.column("verification_status"),
    ),
    "check_in": sa.table(
        "volunteer_check_ins",
        *_common(),
        sa.column("checked_in_at", UTCDateTime()),
        sa.column("user_id"),
        sa.column("verified", sa.Boolean()),
        sa.column("hours", sa.Float()),
    ),
    "donation": sa.table(
        "donations",
        *_common(),
        sa.column("created_at", UTCDateTime()),
        sa.column("amount"),
        sa.column("currency"),
        sa.column("status"),
    ),
    "giving_request": sa.table(
        "giving_requests",
        *_common(),
        sa.column("created_at", UTCDateTime()),
        sa.column("program_id"),
        sa.column("program_version"),
        sa.column("kind"),
        sa.column("status"),
        sa.column("amount"),
        sa.column("computed_amount"),
        sa.column("capped", sa.Boolean()),
        sa.column("currency"),
    ),
    # The organization's people (consultants have no organization): who is an active member.
    "member": sa.table("users", *_common(), sa.column("active", sa.Boolean())),
}
# A published wellbeing week's figures: the table is the wellbeing slice's, named here for the same reason.
WELLBEING_WEEK = "wellbeing_week"
_weeks = sa.table(
    "wellbeing_weeks",
    sa.column("organization_id"),
    sa.column("week_start", sa.Date()),
    sa.column("revision"),
    sa.column("respondents"),
    sa.column("responses"),
    sa.column("mood_average", sa.Float()),
    sa.column("stress_average", sa.Float()),
    sa.column("energy_average", sa.Float()),
    sa.column("energy_respondents"),
    sa.column("positive"),
    sa.column("neutral"),
    sa.column("negative"),
    sa.column("epsilon", sa.Float()),
    sa.column("epsilon_spent", sa.Float()),
)
# The noise of a publication with `epsilon`, as `wellbeing.published` names it (kindling/wellbeing/noise.py).
_MECHANISM = "laplace"
_RECONCILE_BATCH = 5000
MISMATCHES_LISTED = 100


@dataclasses.dataclass
class Reconciliation:
    """What reconciling found: the records that differ from the log (at most 100 listed, all
    counted), and the lowest seq of an event whose content does not match its hash (or None)."""

    mismatches: list[dict] = dataclasses.field(default_factory=list)
    count: int = 0
    first_unhashed: int | None = None

    def hashed(self, event: dict) -> None:
        """Check an event's own hash."""
        self.compare(event["seq"], event_hash(event), event["hash"])

    def differs(self, kind: str, subject_id: str, log: dict | None, table: dict | None) -> None:
        """Count a record whose facts differ from the log's, and list it among the first 100."""
        self.count += 1
        if len(self.mismatches) < MISMATCHES_LISTED:
            self.mismatches.append({"subject": {"kind": kind, "id": subject_id}, **_first_difference(log, table)})

    def compare(self, seq: int, computed: str, stored: str) -> None:
        """Note event `seq` as unhashed when the hash computed of it is not the one stored."""
        if computed != stored and (self.first_unhashed is None or seq < self.first_unhashed):
            self.first_unhashed = seq


RECORD_KINDS = tuple(_RECORDS)


def reconcile(db: Session, *, organization_id: str, up_to: int) -> Reconciliation:
    """The records whose facts differ from what the log up to seq `up_to` implies. A record with
    no event, or events with no record, differ too. Every event of a record's kind is hashed on the
    way.

    Each kind is read in id order, a batch of rows at a time with the events of the same id range,
    so memory stays flat however many records there are."""
    found = Reconciliation()
    for kind, table in _RECORDS.items():
        for subject_id, log, facts in _differences(db, organization_id, up_to, kind, table, found):
            found.differs(kind, subject_id, log, facts)
    for monday, log, facts in wellbeing_week_differences(db, organization_id=organization_id, up_to=up_to):
        found.differs(WELLBEING_WEEK, monday, log, facts)
    return found


def wellbeing_week_differences(db: Session, *, organization_id: str, up_to: int) -> Iterator[Difference]:
    """(Monday, figures in the log, figures in the table) of each published wellbeing week where
    the two differ: every figure of the week as published against its `wellbeing.published` events
    up to seq `up_to`. A week the table shows unpublished (revision 0) has no figures there."""
    publications: dict[str, list[dict]] = {}
    for subject_id, data in db.execute(
        select(_events.c.subject_id, _events.c.data)
        .where(
            _events.c.organization_id == organization_id,
            _events.c.subject_kind == WELLBEING_WEEK,
            _events.c.seq <= up_to,
        )
        .order_by(_events.c.seq)
    ):
        publications.setdefault(subject_id, []).append(data)
    tables = {
        row.week_start.isoformat(): _week_facts(row)
        for row in db.execute(select(_weeks).where(_weeks.c.organization_id == organization_id, _weeks.c.revision > 0))
    }
    for monday in sorted(publications.keys() | tables.keys()):
        logged = replay.published_week(publications[monday]) if monday in publications else None
        facts = tables.get(monday)
        if logged != facts:
            yield monday, logged, facts


def _week_facts(row: sa.Row) -> dict:
    """A published week's row, in the shape of its `wellbeing.published` event."""
    sentiment = (
        None if row.positive is None else {"positive": row.positive, "neutral": row.neutral, "negative": row.negative}
    )
    return replay.week_facts(
        {
            "revision": row.revision,
            "respondents": row.respondents,
            "responses": row.responses,
            "averages": {"mood": row.mood_average, "stress": row.stress_average, "energy": row.energy_average},
            "energyRespondents": row.energy_respondents,
            "sentiment": sentiment,
            "privacy": {
                "epsilon": row.epsilon,
                "mechanism": _MECHANISM if row.epsilon else None,
                "epsilonSpent": row.epsilon_spent,
            },
        }
    )


def _differences(
    db: Session, organization_id: str, up_to: int, kind: str, table: sa.TableClause, found: Reconciliation
) -> Iterator[Difference]:
    """(id, facts in the log, facts in the table) of each record of `kind` where the two differ."""
    table_facts = _TABLE_FACTS[kind]
    after: str | None = None
    while True:
        statement = select(table).where(table.c.organization_id == organization_id)
        if after is not None:
            statement = statement.where(table.c.id > after)
        rows = db.execute(statement.order_by(table.c.id).limit(_RECONCILE_BATCH)).all()
        last = rows[-1].id if len(rows) == _RECONCILE_BATCH else None
        in_range = ([_events.c.subject_id > after] if after is not None else []) + (
            [_events.c.subject_id <= last] if last is not None else []
        )
        states: dict[str, dict] = {}
        events = db.execute(
            select(*_EVENT_COLUMNS)
            .where(
                _events.c.organization_id == organization_id,
                _events.c.subject_kind == kind,
                _events.c.seq <= up_to,
                *in_range,
            )
            .order_by(_events.c.subject_id, _events.c.seq)
        )
        for seq, type_, subject_id, actor_id, data, occurred_at, prev_hash, hash_ in events:
            body = event_body(seq, organization_id, type_, kind, subject_id, actor_id, data, occurred_at, prev_hash)
            found.compare(seq, body_hash(body), hash_)
            states[subject_id] = replay.apply(states.get(subject_id), body)
        for row in rows:
            record_id = row[0]
            state = states.pop(record_id, None)
            facts = table_facts(row)
            logged = replay.implied(kind, state) if state is not None else None
            if logged != facts:
                yield record_id, logged, facts
        for subject_id in sorted(states):  # events of records no table holds
            yield subject_id, replay.implied(kind, states[subject_id]), None
        if last is None:
            return
        after = last


_EVENT_COLUMNS = tuple(
    _events.c[name] for name in ("seq", "type", "subject_id", "actor_id", "data", "occurred_at", "prev_hash", "hash")
)


# A table row's facts, named and written as the log writes them, by kind. Each unpacks the row in
# the order of `_RECORDS`' columns: a Row's attributes cost many times its items.


def _act_facts(row: sa.Row) -> dict:
    _, _, created_at, category, requested_level, verified_level, verification_status = row
    return {
        "createdAt": timestamp(created_at),
        "category": category,
        "requestedLevel": requested_level,
        "verifiedLevel": verified_level,
        "verificationStatus": verification_status,
    }


def _check_in_facts(row: sa.Row) -> dict:
    _, _, checked_in_at, user_id, verified, hours = row
    return {"checkedInAt": timestamp(checked_in_at), "userId": user_id, "verified": verified, "hours": hours}


def _donation_facts(row: sa.Row) -> dict:
    _, _, created_at, amount, currency, status = row
    return {"createdAt": timestamp(created_at), "amount": amount, "currency": currency, "status": status}


def _giving_request_facts(row: sa.Row) -> dict:
    _, _, created_at, program_id, program_version, kind, status, amount, computed_amount, capped, currency = row
    return {
        "createdAt": timestamp(created_at),
        "programId": program_id,
        "programVersion": program_version,
        "kind": kind,
        "status": status,
        "amount": amount,
        "computedAmount": computed_amount,
        "capped": capped,
        "currency": currency,
    }


def _member_facts(row: sa.Row) -> dict:
    _, _, active = row
    return {"active": active}


_TABLE_FACTS = {
    "act": _act_facts,
    "check_in": _check_in_facts,
    "donation": _donation_facts,
    "giving_request": _giving_request_facts,
    "member": _member_facts,
}


def _first_difference(log: dict | None, table: dict | None) -> dict:
    """The first fact that differs, `{field, log, table}`; `record` when one side has none."""
    if log is None or table is None:
        return {"field": "record", "log": log, "table": table}
    for name, value in table.items():
        if log.get(name) != value:
            return {"field": name, "log": log.get(name), "table": value}
    raise AssertionError("no difference")
