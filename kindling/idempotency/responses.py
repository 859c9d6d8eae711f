"""Finding, keeping and forgetting the responses of keyed writes (docs/decisions.md §16).

A key is the caller's: two people may use the same one. A keyed write claims its key in its own
transaction (under an advisory lock on PostgreSQL, so that a second request meets the lock rather
than waiting for the first; SQLite's single writer queues the second request behind the first),
and stores its response in that claim, so that the effect and the stored response commit
together or not at all.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib

from sqlalchemy import Insert, bindparam, delete, func, select, true, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from kindling.errors import ApiError, Conflict
from kindling.idempotency.models import IdempotentResponse
from kindling.platform.base import utcnow

KEPT_FOR = dt.timedelta(hours=24)


class IdempotencyKeyReused(ApiError):
    status, code = 422, "idempotency_key_reused"


@dataclasses.dataclass(frozen=True)
class Attempt:
    """One keyed write: whose key, which operation (method and path) and which body."""

    user_id: str
    key: str
    operation: str
    body_sha256: str


@dataclasses.dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes


def key_in_use() -> Conflict:
    error = Conflict(
        "A request with this Idempotency-Key is still running: retry it in a second",
        code="idempotency_key_in_use",
    )
    error.headers = {"Retry-After": "1"}
    return error


def begin(db: Session, attempt: Attempt, *, now: dt.datetime) -> Answer | None:
    """What the key's first request answered, to answer again; None when the key is new, which
    the transaction of `db` then holds until it ends."""
    dialect = db.get_bind().dialect.name
    claim = _claim(attempt, now)
    if dialect == "postgresql":
        claim["lock"] = _lock(attempt)
    # One statement for a new key: the lock, then the claim of the key in this transaction. Core
    # on the session's connection: the ORM's bookkeeping would cost more than the statement.
    if db.connection().execute(_CLAIMS[dialect], claim).rowcount:
        return None
    stored = db.get(IdempotentResponse, (attempt.user_id, attempt.key), populate_existing=True)
    if stored is None or stored.status is None:
        raise key_in_use()  # claimed by a transaction still running
    if stored.created_at <= now - KEPT_FOR:
        # Expired, and not yet forgotten by the worker: the key is new again.
        for name, value in _claim(attempt, now).items():
            setattr(stored, name, value)
        stored.status = stored.headers = stored.body = None
        db.flush()
        return None
    if (stored.operation, stored.body_sha256) != (attempt.operation, attempt.body_sha256):
        raise IdempotencyKeyReused("This Idempotency-Key was used for another request: use a new key for a new request")
    return Answer(stored.status, stored.headers or {}, stored.body or b"")


def keep(db: Session, attempt: Attempt, answer: Answer) -> None:
    """Store the answer in the key's claim, in the transaction of the answer's effect."""
    db.connection().execute(
        _KEEP,
        {
            "claimant": attempt.user_id,
            "claimed": attempt.key,
            "status": answer.status,
            "headers": answer.headers,
            "body": answer.body,
        },
    )


def keep_refusal(db: Session, attempt: Attempt, answer: Answer, *, now: dt.datetime) -> None:
    """Store a refusal, in a transaction of its own once the request's has rolled back its claim;
    a request that claimed the key meanwhile keeps it."""
    db.execute(
        _insert(db)
        .values(**_claim(attempt, now), status=answer.status, headers=answer.headers, body=answer.body)
        .on_conflict_do_nothing()
    )


def _claim(attempt: Attempt, now: dt.datetime) -> dict:
    """The columns of a key's claim."""
    return {
        "user_id": attempt.user_id,
        "key": attempt.key,
        "operation": attempt.operation,
        "body_sha256": attempt.body_sha256,
        "created_at": now,
    }


def _insert(db: Session) -> postgresql.Insert | sqlite.Insert:
    """An INSERT of a response in the dialect of `db`, which can skip a conflicting key."""
    insert = postgresql.insert if db.get_bind().dialect.name == "postgresql" else sqlite.insert
    return insert(IdempotentResponse)


def _claim_statement(dialect: str) -> Insert:
    """The claim of a key, skipped when it is taken (on PostgreSQL, also while its lock is)."""
    columns = IdempotentResponse.__table__.c
    values = select(*(bindparam(name, type_=columns[name].type) for name in _CLAIMED))
    if dialect == "postgresql":
        free = values.where(func.pg_try_advisory_xact_lock(bindparam("lock")))
        return postgresql.insert(IdempotentResponse).from_select(_CLAIMED, free).on_conflict_do_nothing()
    # SQLite reads INSERT … SELECT … ON CONFLICT only with a WHERE clause.
    return sqlite.insert(IdempotentResponse).from_select(_CLAIMED, values.where(true())).on_conflict_do_nothing()


# Built once: constructing these statements cost more than running them (benchmarks/idempotency.py).
_CLAIMED = ("user_id", "key", "operation", "body_sha256", "created_at")
_CLAIMS = {dialect: _claim_statement(dialect) for dialect in ("postgresql", "sqlite")}
_KEEP = (
    update(IdempotentResponse)
    .where(IdempotentResponse.user_id == bindparam("claimant"), IdempotentResponse.key == bindparam("claimed"))
    .values(status=bindparam("status"), headers=bindparam("headers"), body=bindparam("body"))
)


def chore(db: Session) -> None:
    """The worker's chore that forgets the responses older than a day."""
    db.execute(delete(IdempotentResponse).where(IdempotentResponse.created_at <= utcnow() - KEPT_FOR))


def body_sha256(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


def _lock(attempt: Attempt) -> int:
    """The advisory lock of one principal's key: 64 bits of their hash, as PostgreSQL's bigint."""
    digest = hashlib.sha256(f"idempotency\n{attempt.user_id}\n{attempt.key}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)
