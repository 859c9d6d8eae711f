"""Kindness acts: record, read, change and list them, keeping ripple counts and tallies exact.

The ripple score of an act a is `a.verified_level + 0.5 × min(10, n)`, where n counts the
acts a's recipient sent in the same organization with created_at in (a.created_at,
a.created_at + 30 days]. n only grows when an act is created, so each act stores min(10, n)
as `ripple_count` and every create settles it in both directions: the new act's own count,
and the counts of the acts its sender received in the 30 days before it. Creates and changes
of one organization are serialized on its row, so neither direction can miss a concurrent act.
"""

from __future__ import annotations

import collections
import datetime as dt
import typing

from sqlalchemy import Insert, Select, Table, bindparam, func, literal, select, tuple_, union_all, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session as DbSession
from sqlalchemy.orm.attributes import set_committed_value

from kindling.accounts import mailboxes
from kindling.accounts.locks import lock_organization
from kindling.accounts.models import User
from kindling.consulting import milestones
from kindling.errors import BadRequest, Forbidden, NotFound, invalid
from kindling.evidence import log as evidence
from kindling.evidence import replay
from kindling.kindness import stats as kindness_stats
from kindling.kindness import verification_status
from kindling.kindness.events import ACT_CHANGED, ACT_RECORDED, ActChanged, ActRecorded
from kindling.kindness.models import KindnessAct, KindnessRecipientTally, KindnessTally
from kindling.platform import addresses, pagination, write_behind
from kindling.platform.access import Principal, canonical_id
from kindling.platform.base import utcnow
from kindling.platform.cache import Cache
from kindling.platform.database import on_driver
from kindling.platform.daterange import parse_range

RIPPLE_WINDOW = dt.timedelta(days=30)
RIPPLE_CAP = 10
# The fields a change of an act may touch, as the evidence log names them.
_CHANGEABLE = ("description", "category", "media", "requestedLevel")
# Built once: a create runs each of these, and constructing one costs more than running it. Core
# on the session's connection: the ORM's bookkeeping of an UPDATE costs more still.
_acts = typing.cast(Table, KindnessAct.__table__)
_tallies = typing.cast(Table, KindnessTally.__table__)
_recipient_tallies = typing.cast(Table, KindnessRecipientTally.__table__)
# A window of one person's acts is written as a range of (person, created_at) pairs: so written,
# only the index that starts with the organization and the person serves it. As a range of
# created_at beside an equal person, it was served by the organization's index by creation time
# whenever the statistics predated the window's acts (a busy organization between two ANALYZEs),
# which read every act of the organization in the window, under its lock: 6,339 rows and 3.2 ms
# where the person's index takes 0.03 ms, in `python -m benchmarks.contention`.
_SENDER, _RECIPIENT = (bindparam(name, type_=_acts.c.user_id.type) for name in ("sender", "recipient"))
_SINCE, _AT, _UNTIL = (bindparam(name, type_=_acts.c.created_at.type) for name in ("since", "at", "until"))
_received = tuple_(_acts.c.recipient_id, _acts.c.created_at)
_sent = tuple_(_acts.c.user_id, _acts.c.created_at)
_RAISE_RIPPLE_COUNTS = (
    update(_acts)
    .where(
        _acts.c.organization_id == bindparam("organization"),
        _acts.c.recipient_id == _SENDER,
        _received >= tuple_(_SENDER, _SINCE),
        _received < tuple_(_SENDER, _AT),
        _acts.c.ripple_count < RIPPLE_CAP,
    )
    .values(ripple_count=_acts.c.ripple_count + 1)
    .returning(_acts.c.id, _acts.c.category)
)
_PASSED_ON = select(func.count()).select_from(
    select(_acts.c.id)
    .where(
        _acts.c.organization_id == bindparam("organization"),
        _acts.c.user_id == _RECIPIENT,
        _sent > tuple_(_RECIPIENT, _AT),
        _sent <= tuple_(_RECIPIENT, _UNTIL),
    )
    .limit(RIPPLE_CAP)
    .subquery()
)


def _upsert(
    insert: typing.Callable[[Table], postgresql.Insert | sqlite.Insert],
    table: Table,
    added: tuple[str, ...],
    rows: Select | None = None,
) -> Insert:
    """Insert a row of `table` (or `rows`, its key's columns and then `added`), or add its
    columns `added` to the row with its key."""
    statement = insert(table)
    keys = [column.name for column in table.primary_key]
    if rows is not None:
        statement = statement.from_select([*keys, *added], rows)
    return statement.on_conflict_do_update(
        index_elements=keys, set_={name: table.c[name] + statement.excluded[name] for name in added}
    )


# Upserts, whose row count nobody reads: sent with the transaction's next round trip on
# PostgreSQL (kindling/platform/write_behind.py), by dialect.
_TALLY_SUMS = ("acts", "verification_sum", "ripple_sum")
_ADD_TO_TALLY = {
    name: _upsert(insert, _tallies, _TALLY_SUMS)
    for name, insert in (("postgresql", postgresql.insert), ("sqlite", sqlite.insert))
}
_COUNT_RECIPIENT = {
    name: _upsert(insert, _recipient_tallies, ("acts",))
    for name, insert in (("postgresql", postgresql.insert), ("sqlite", sqlite.insert))
}
# The new act's own ripple count, written by the statement that counts it (the ORM then holds it
# as stored): no update of its own.
_SET_OWN_RIPPLES = (
    update(_acts)
    .where(_acts.c.id == bindparam("act"))
    .values(ripple_count=_PASSED_ON.scalar_subquery())
    .returning(_acts.c.ripple_count, _acts.c.category, _acts.c.verified_level)
)
_ACTS_TOTAL = select(func.sum(_tallies.c.acts)).where(_tallies.c.organization_id == bindparam("organization"))
# On PostgreSQL the raise, the act's own count, the tallies of both and the total as one
# statement: each would cost a round trip while the organization's lock is held, and one
# organization's creates wait for each other's. Its answer: the act's ripple count, the total of
# acts before it, the acts raised and the highest milestone of acts on record.
_RAISED = _RAISE_RIPPLE_COUNTS.cte("raised")
_OWN = _SET_OWN_RIPPLES.cte("own")
_counts = union_all(
    select(_OWN.c.category, literal(1).label("acts"), _OWN.c.verified_level, _OWN.c.ripple_count),
    select(_RAISED.c.category, literal(0), literal(0), literal(1)),
).subquery("counts")
_TALLIED = (
    _upsert(
        postgresql.insert,
        _tallies,
        _TALLY_SUMS,
        select(
            bindparam("organization"),
            _counts.c.category,
            *(func.sum(column) for column in list(_counts.c)[1:]),
        ).group_by(_counts.c.category),
    )
    .returning(_tallies.c.category)
    .cte("tallied")
)
_SETTLE = select(
    select(_OWN.c.ripple_count).scalar_subquery(),
    _ACTS_TOTAL.scalar_subquery(),
    select(func.array_agg(_RAISED.c.id)).scalar_subquery(),
    milestones.highest_on_record("kindness_acts"),
).add_cte(_TALLIED)
# The same writes answering nothing, for a create that settles with its COMMIT and reads what it
# needs after it: no answer is worked out under the lock only to be dropped.
_SETTLE_AT_COMMIT = select(literal(1)).add_cte(_TALLIED)
# Read once a create that settles with its COMMIT has committed: the act's ripple count, the
# organization's total of acts and the highest milestone of acts on record.
_SETTLED = select(
    select(_acts.c.ripple_count).where(_acts.c.id == bindparam("act")).scalar_subquery(),
    _ACTS_TOTAL.scalar_subquery(),
    milestones.highest_on_record("kindness_acts"),
)
# A page's acts, as named tuples of the table's columns. A SQLAlchemy Row looks each attribute up
# on its class first and raises and catches an AttributeError there: reading an act's body from
# a Row is what made a 100-act page slow (`python -m benchmarks.instructions`, with Rows and with these).
if typing.TYPE_CHECKING:
    # To the type checker the tuple reads as the model whose columns it holds, one for one.
    class ActRow(KindnessAct):
        @classmethod
        def _make(cls, row: typing.Iterable) -> ActRow: ...
else:
    ActRow = collections.namedtuple("ActRow", KindnessAct.__table__.columns.keys())


def create_act(
    db: DbSession,
    cache: Cache,
    *,
    caller: Principal,
    description: str,
    category: str,
    verification_level: int,
    recipient_id: str,
    media: list[dict] | None = None,
    created_at: dt.datetime | None = None,
    source: str = "api",
    commit: bool = False,
) -> KindnessAct:
    """Record an act the caller did for `recipient_id` (at `created_at`, by default now), through
    `source`; with `commit`, commit the caller's transaction with it, which then holds nothing
    more to write."""
    recipient_id = canonical_id(recipient_id)
    if recipient_id == caller.user_id:
        raise BadRequest("The recipient cannot be the sender", code="self_recognition")
    _check_recipient_address(db, caller=caller, recipient_id=recipient_id)
    organization_id = caller.member_of
    created_at = created_at or utcnow()
    act = KindnessAct(
        organization_id=organization_id,
        user_id=caller.user_id,
        recipient_id=recipient_id,
        description=description.strip(),
        category=category,
        verification_level=verification_level,
        verified_level=1,
        media=media or [],
        ripple_count=0,
        source=source,
        created_at=created_at,
        updated_at=created_at,
    )
    verification_status.refresh(db, act, decisions={})
    db.add(act)
    # The act's own row needs no lock: written first, so that the organization's lock, which the
    # ripple counts, tallies and log need, is held only from here to the commit. What needs
    # nothing the lock guards is done before it, too.
    db.flush()
    data: ActRecorded = {
        "requestedLevel": verification_level,
        "category": category,
        "contentDigest": content_digest(act),
        "createdAt": evidence.timestamp(created_at),
    }
    if source != "api":
        data["source"] = source
    kindness_stats.invalidate_after_commit(db, cache, organization_id)
    lock_organization(db, organization_id)
    _count_recipient(db, organization_id, recipient_id)
    settling = {
        "organization": organization_id,
        "act": act.id,
        "sender": caller.user_id,
        "recipient": recipient_id,
        "since": created_at - RIPPLE_WINDOW,
        "at": created_at,
        "until": created_at + RIPPLE_WINDOW,
    }
    recorded = [evidence.Entry(ACT_RECORDED, ("act", act.id), caller.user_id, data)]
    if commit and db.get_bind().dialect.name == "postgresql":
        # The settling, the tallies and the event go with the COMMIT, and what the answer needs is
        # read after it: nothing waits for an answer while the organization's lock is held.
        write_behind.send_later(db, _SETTLE_AT_COMMIT, settling)
        evidence.append_all(db, organization_id=organization_id, entries=recorded)
        ripple_count, total, highest = write_behind.commit_then_read(db, _SETTLED, settling)
        set_committed_value(act, "ripple_count", ripple_count)
        # Told by the first create to find a threshold reached and not on record: here after the
        # commit, in a transaction of its own.
        if milestones.unrecorded("kindness_acts", total, highest):
            milestones.record_milestones(db, organization_id=organization_id, kindness_acts_total=total)
        return act
    passed_on, earlier, highest = _settle_ripples(db, settling)
    set_committed_value(act, "ripple_count", passed_on)
    evidence.append_all(db, organization_id=organization_id, entries=recorded)
    if milestones.unrecorded("kindness_acts", earlier + 1, highest):
        milestones.record_milestones(db, organization_id=organization_id, kindness_acts_total=earlier + 1)
    return act


def _check_recipient_address(db: DbSession, *, caller: Principal, recipient_id: str) -> None:
    """A recipient named by an address is compared as a mailbox: the sender's own is 400
    `self_recognition`, a member's 400 `recipient_is_member_email` (they are named by their id, so
    that they confirm level 2 in person and their acts count as theirs)."""
    mailbox = addresses.mailbox_of(recipient_id)
    if mailbox is None:
        return
    if addresses.mailbox_of(db.get_one(User, caller.user_id).email) == mailbox:
        raise invalid("body", "recipientId", "is your own address", code="self_recognition")
    if mailboxes.is_members(db, organization_id=caller.member_of, mailbox=mailbox):
        raise invalid(
            "body",
            "recipientId",
            "is a member's email address: name them by their id",
            code="recipient_is_member_email",
        )


def content_digest(act: KindnessAct) -> str:
    """The act's content as the evidence log fingerprints it (docs/evidence.md)."""
    return replay.content_digest(act.description, act.category, act.media)


def ripple_score(act: KindnessAct | ActRow) -> float:
    """The act's verified level plus half a point for each act passed on (at most ten)."""
    return act.verified_level + act.ripple_count / 2


def get_act(db: DbSession, *, caller: Principal, act_id: str) -> KindnessAct:
    """One act of the caller's organization; any other id is not found."""
    act = db.scalar(
        select(KindnessAct).where(KindnessAct.id == act_id, KindnessAct.organization_id == caller.organization_id)
    )
    if act is None:
        raise NotFound("No such kindness act")
    return act


def recipient_of(db: DbSession, *, act_id: str) -> str | None:
    """The recipient id of an act of any organization (None for no act): for callers that check the organization themselves."""
    return db.scalar(select(KindnessAct.recipient_id).where(KindnessAct.id == act_id))


def update_act(
    db: DbSession,
    cache: Cache,
    *,
    caller: Principal,
    act_id: str,
    description: str | None = None,
    category: str | None = None,
    media: list[dict] | None = None,
    verification_level: int | None = None,
) -> KindnessAct:
    """Change an act: its sender may change the content, an organization admin the requested verification level.

    A new requested level is a new request: its status is worked out again; the verified level stays.
    """
    lock_organization(db, caller.member_of)
    act = get_act(db, caller=caller, act_id=act_id)
    if (description, category, media) != (None, None, None) and act.user_id != caller.user_id:
        raise Forbidden("Only the sender may change an act's description, category or media")
    if verification_level is not None and not caller.is_admin:
        raise Forbidden("Only an organization admin may change the verification level")
    before = (act.description, act.category, act.media, act.verification_level)
    _add_to_tally(db, act, sign=-1)
    if description is not None:
        act.description = description.strip()
    if category is not None:
        act.category = category
    if media is not None:
        act.media = media
    if verification_level is not None:
        act.verification_level = verification_level
        verification_status.refresh(db, act)
    act.updated_at = utcnow()
    _add_to_tally(db, act, sign=1)
    db.flush()
    after = (act.description, act.category, act.media, act.verification_level)
    changed = [name for name, old, new in zip(_CHANGEABLE, before, after, strict=True) if old != new]
    if changed:
        # Decisions already made stay; the log shows what changed after them.
        data: ActChanged = {
            "changed": changed,
            "requestedLevel": act.verification_level,
            "category": act.category,
            "contentDigest": content_digest(act),
        }
        evidence.append(
            db,
            organization_id=act.organization_id,
            type=ACT_CHANGED,
            subject=("act", act.id),
            actor_id=caller.user_id,
            data=data,
        )
    kindness_stats.invalidate_after_commit(db, cache, caller.member_of)
    return act


def list_acts(
    db: DbSession,
    *,
    caller: Principal,
    category: str | None = None,
    user_id: str | None = None,
    start_date: str | None = None,
    end_date: str | None = None,
    limit: int = 100,
    cursor: str | None = None,
) -> tuple[list[ActRow], str | None]:
    """A page of the organization's acts, newest first, and the cursor of the next page (or None).

    The acts are rows with the attributes of a KindnessAct: pages are only read, and a thousand
    rows load in about two thirds of the time a thousand ORM objects take.
    """
    since, until = parse_range(start_date, end_date)
    query = select(KindnessAct.__table__).where(KindnessAct.organization_id == caller.organization_id)
    if category is not None:
        query = query.where(KindnessAct.category == category)
    if user_id is not None:
        query = query.where(KindnessAct.user_id == canonical_id(user_id))
    if since is not None:
        query = query.where(KindnessAct.created_at >= since)
    if until is not None:
        query = query.where(KindnessAct.created_at < until)
    query = pagination.keyset(
        query, timestamp=KindnessAct.created_at, record_id=KindnessAct.id, limit=limit, cursor=cursor
    )
    acts = [ActRow._make(row) for row in db.execute(query)]
    return pagination.cut(acts, limit=limit, position=lambda act: (act.created_at, act.id))


def _settle_ripples(db: DbSession, settling: dict) -> tuple[int, int, int | None]:
    """Under the organization's lock, for the act `act` from `sender` to `recipient` at `at`:
    count it towards the acts its sender received in the window before it, store its own ripple
    count (min(10, acts `recipient` sent in (at, at + 30 days])), and add both to the tallies.
    The act's ripple count, the organization's total of acts before this one, and the highest
    milestone of acts on record."""
    connection = db.connection()
    if connection.dialect.name == "postgresql":
        # On the driver's cursor: SQLAlchemy's execution of it cost a create with an
        # Idempotency-Key, which settles so, about 0.15 ms more (`python -m benchmarks.idempotency`).
        settled = on_driver(connection, *write_behind.driver_form(connection, _SETTLE, settling)).fetchone()
        assert settled is not None, "the settling answers one row"
        passed_on, earlier, raised_ids, highest = settled
    else:
        # SQLite runs in the process: several statements cost no more than one.
        raised = list(connection.execute(_RAISE_RIPPLE_COUNTS, settling))
        passed_on, category, verified_level = connection.execute(_SET_OWN_RIPPLES, settling).one()
        earlier = connection.execute(_ACTS_TOTAL, settling).scalar_one()
        highest = connection.execute(select(milestones.highest_on_record("kindness_acts")), settling).scalar_one()
        organization_id = settling["organization"]
        add_to_category_tally(
            db, organization_id, category, acts=1, verification_sum=verified_level, ripple_sum=passed_on
        )
        for raised_category, count in collections.Counter(row.category for row in raised).items():
            add_to_category_tally(db, organization_id, raised_category, ripple_sum=count)
        raised_ids = [row.id for row in raised]
    for act_id in raised_ids or ():
        # An act this session holds (one a batch recorded before) reads its new count again.
        held = db.identity_map.get(db.identity_key(KindnessAct, act_id))
        if held is not None:
            db.expire(held, ["ripple_count"])
    return passed_on, earlier or 0, highest


def _add_to_tally(db: DbSession, act: KindnessAct, *, sign: int) -> None:
    """Add an act to (sign=1) or take it out of (sign=-1) its category's tally."""
    add_to_category_tally(
        db,
        act.organization_id,
        act.category,
        acts=sign,
        verification_sum=sign * act.verified_level,
        ripple_sum=sign * act.ripple_count,
    )


def add_to_category_tally(
    db: DbSession, organization_id: str, category: str, *, acts: int = 0, verification_sum: int = 0, ripple_sum: int = 0
) -> None:
    """Add to the sums of an organization's category tally."""
    added = {
        "organization_id": organization_id,
        "category": category,
        "acts": acts,
        "verification_sum": verification_sum,
        "ripple_sum": ripple_sum,
    }
    write_behind.send_later(db, _ADD_TO_TALLY[db.get_bind().dialect.name], added)


def _count_recipient(db: DbSession, organization_id: str, recipient_id: str) -> None:
    counted = {"organization_id": organization_id, "recipient_id": recipient_id, "acts": 1}
    write_behind.send_later(db, _COUNT_RECIPIENT[db.get_bind().dialect.name], counted)
