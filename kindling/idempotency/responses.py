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
import typing
from collections.abc import Callable

from sqlalchemy import Dialect, delete
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session
from sqlalchemy.types import TypeEngine

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
    connection = db.connection()
    statements = _statements(connection.dialect)
    claim = _claim(attempt, statements.created_at(now))
    if connection.dialect.name == "postgresql":
        claim["lock"] = _lock(attempt)
    # One statement for a new key: the lock, then the claim of the key in this transaction.
    if connection.exec_driver_sql(statements.claim, claim).rowcount:
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
    connection = db.connection()
    statements = _statements(connection.dialect)
    connection.exec_driver_sql(
        statements.keep,
        {
            "user_id": attempt.user_id,
            "key": attempt.key,
            "status": answer.status,
            "headers": statements.headers(answer.headers),
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


def _claim(attempt: Attempt, created_at: object) -> dict:
    """The columns of a key's claim."""
    return {
        "user_id": attempt.user_id,
        "key": attempt.key,
        "operation": attempt.operation,
        "body_sha256": attempt.body_sha256,
        "created_at": created_at,
    }


def _insert(db: Session) -> postgresql.Insert | sqlite.Insert:
    """An INSERT of a response in the dialect of `db`, which can skip a conflicting key."""
    insert = postgresql.insert if db.get_bind().dialect.name == "postgresql" else sqlite.insert
    return insert(IdempotentResponse)


@dataclasses.dataclass(frozen=True)
class _Statements:
    """A dialect's claim of a key and keep of its answer, in its driver's own SQL, and the
    conversions SQLAlchemy makes of the values that need one. Run by `exec_driver_sql`, which
    skips the compiled-statement cache and the processing of every parameter: a Core statement
    here cost some 90,000 more instructions (callgrind) of a request that has two of them."""

    # Skipped when the key is taken (on PostgreSQL, also while its lock is).
    claim: str
    keep: str
    created_at: Callable[[dt.datetime], object]
    headers: Callable[[dict], object]


_COLUMNS = "user_id, key, operation, body_sha256, created_at"
_SQL = {
    "postgresql": (
        f"INSERT INTO idempotent_responses ({_COLUMNS})"
        " SELECT %(user_id)s, %(key)s, %(operation)s, %(body_sha256)s, %(created_at)s"
        " WHERE pg_try_advisory_xact_lock(%(lock)s) ON CONFLICT DO NOTHING",
        "UPDATE idempotent_responses SET status = %(status)s, headers = %(headers)s::json, body = %(body)s"
        " WHERE user_id = %(user_id)s AND key = %(key)s",
    ),
    # SQLite reads INSERT … SELECT … ON CONFLICT only with a WHERE clause.
    "sqlite": (
        f"INSERT INTO idempotent_responses ({_COLUMNS})"
        " SELECT :user_id, :key, :operation, :body_sha256, :created_at WHERE true ON CONFLICT DO NOTHING",
        "UPDATE idempotent_responses SET status = :status, headers = :headers, body = :body"
        " WHERE user_id = :user_id AND key = :key",
    ),
}
_BY_DIALECT: dict[str, _Statements] = {}


def _statements(dialect: Dialect) -> _Statements:
    """The statements of `dialect`, made on first use (every engine of a dialect has the same
    settings: kindling.platform.database.make_engine)."""
    statements = _BY_DIALECT.get(dialect.name)
    if statements is None:
        columns = IdempotentResponse.__table__.c
        claim, keep = _SQL[dialect.name]
        statements = _BY_DIALECT[dialect.name] = _Statements(
            claim, keep, _converter(columns.created_at.type, dialect), _converter(columns.headers.type, dialect)
        )
    return statements


def _converter(type_: TypeEngine, dialect: Dialect) -> Callable[[typing.Any], object]:
    """What SQLAlchemy makes of a value of the column type `type_` for `dialect` (on SQLite, a
    timestamp's text)."""
    return type_.dialect_impl(dialect).bind_processor(dialect) or (lambda value: value)


def chore(db: Session) -> None:
    """The worker's chore that forgets the responses older than a day."""
    db.execute(delete(IdempotentResponse).where(IdempotentResponse.created_at <= utcnow() - KEPT_FOR))


def body_sha256(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


def _lock(attempt: Attempt) -> int:
    """The advisory lock of one principal's key: 64 bits of their hash, as PostgreSQL's bigint."""
    digest = hashlib.sha256(f"idempotency\n{attempt.user_id}\n{attempt.key}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)
