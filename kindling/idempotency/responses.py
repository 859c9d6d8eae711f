"""Finding, keeping and forgetting the responses of keyed writes (docs/decisions.md §16).

A key is the caller's: two people may use the same one. A keyed write looks its key up in its
own transaction (under an advisory lock on PostgreSQL, so that a second request meets the lock
rather than waiting for the first; SQLite's single writer queues the second request behind the
first), and stores its response in that transaction, so that the effect and the stored response
commit together or not at all.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import typing
from collections.abc import Callable

from sqlalchemy import Dialect, delete
from sqlalchemy.orm import Session
from sqlalchemy.types import TypeEngine

from kindling.errors import ApiError, Conflict
from kindling.idempotency.models import IdempotentResponse
from kindling.platform.base import utcnow
from kindling.platform.database import on_driver

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
    """What the key's first request answered, to answer again; None when the key is new (or its
    day has passed), which the transaction of `db` then holds until it ends."""
    connection = db.connection()
    statements = _statements(connection.dialect)
    looked_up = {"user_id": attempt.user_id, "key": attempt.key, "expired": statements.created_at(now - KEPT_FOR)}
    if connection.dialect.name == "postgresql":
        looked_up["lock"] = _lock(attempt)
    # One statement: the lock, and what is stored for the key (a row of nulls for nothing).
    row = on_driver(connection, statements.find, looked_up).fetchone()
    assert row is not None, "the lookup answers a row whether or not one is stored"
    held, operation, body_sha256, status, headers, body, fresh = row
    if not held:
        raise key_in_use()
    if operation is None or not fresh:
        return None
    if (operation, body_sha256) != (attempt.operation, attempt.body_sha256):
        raise IdempotencyKeyReused("This Idempotency-Key was used for another request: use a new key for a new request")
    return Answer(status, statements.read_headers(headers) or {}, body or b"")


def keep(db: Session, attempt: Attempt, answer: Answer, *, now: dt.datetime) -> bool:
    """Store the answer in the transaction of `db`, replacing one whose day has passed; False,
    storing nothing, when another request stored an answer for the key after this one looked it
    up (on PostgreSQL, one that committed while `begin`'s statement waited for the lock). The
    caller then rolls its effect back."""
    connection = db.connection()
    statements = _statements(connection.dialect)
    kept = {
        "user_id": attempt.user_id,
        "key": attempt.key,
        "operation": attempt.operation,
        "body_sha256": attempt.body_sha256,
        "created_at": statements.created_at(now),
        "expired": statements.created_at(now - KEPT_FOR),
        "status": answer.status,
        "headers": statements.headers(answer.headers),
        "body": answer.body,
    }
    return on_driver(connection, statements.keep, kept).rowcount == 1


@dataclasses.dataclass(frozen=True)
class _Statements:
    """A dialect's lookup of a key and keep of its answer, in its driver's own SQL, and the
    conversions SQLAlchemy makes of the values that need one. Run on the driver's cursor
    (kindling.platform.database.on_driver): a Core statement here cost some 90,000 more
    instructions (callgrind) of a request that has two of them, and even `exec_driver_sql`
    doubles the driver's own CPU."""

    find: str
    keep: str
    created_at: Callable[[dt.datetime], object]
    headers: Callable[[dict], object]
    read_headers: Callable[[object], dict | None]


_STORED = "operation, body_sha256, status, headers, body"
_COLUMNS = "user_id, key, operation, body_sha256, created_at, status, headers, body"
_REPLACED = ", ".join(f"{column} = excluded.{column}" for column in _COLUMNS.split(", ")[2:])
_SQL = {
    # The lookup joins the stored row to a row of its own, so that it answers the lock's outcome
    # whether or not a row is stored.
    "postgresql": (
        f"SELECT pg_try_advisory_xact_lock(%(lock)s), {_STORED}, created_at > %(expired)s"
        " FROM (SELECT) AS one LEFT JOIN idempotent_responses ON user_id = %(user_id)s AND key = %(key)s",
        f"INSERT INTO idempotent_responses ({_COLUMNS}) VALUES (%(user_id)s, %(key)s, %(operation)s,"
        " %(body_sha256)s, %(created_at)s, %(status)s, %(headers)s::json, %(body)s)"
        f" ON CONFLICT (user_id, key) DO UPDATE SET {_REPLACED} WHERE idempotent_responses.created_at <= %(expired)s",
    ),
    "sqlite": (
        f"SELECT true, {_STORED}, created_at > :expired"
        " FROM (SELECT 1) AS one LEFT JOIN idempotent_responses ON user_id = :user_id AND key = :key",
        f"INSERT INTO idempotent_responses ({_COLUMNS})"
        " VALUES (:user_id, :key, :operation, :body_sha256, :created_at, :status, :headers, :body)"
        f" ON CONFLICT (user_id, key) DO UPDATE SET {_REPLACED} WHERE idempotent_responses.created_at <= :expired",
    ),
}
_BY_DIALECT: dict[str, _Statements] = {}


def _statements(dialect: Dialect) -> _Statements:
    """The statements of `dialect`, made on first use (every engine of a dialect has the same
    settings: kindling.platform.database.make_engine)."""
    statements = _BY_DIALECT.get(dialect.name)
    if statements is None:
        columns = IdempotentResponse.__table__.c
        find, keep = _SQL[dialect.name]
        headers = columns.headers.type.dialect_impl(dialect)
        statements = _BY_DIALECT[dialect.name] = _Statements(
            find,
            keep,
            _converter(columns.created_at.type, dialect),
            _converter(columns.headers.type, dialect),
            headers.result_processor(dialect, None) or _unchanged,
        )
    return statements


def _converter(type_: TypeEngine, dialect: Dialect) -> Callable[[typing.Any], object]:
    """What SQLAlchemy makes of a value of the column type `type_` for `dialect` (on SQLite, a
    timestamp's text)."""
    return type_.dialect_impl(dialect).bind_processor(dialect) or _unchanged


def _unchanged(value: typing.Any) -> typing.Any:
    return value


def chore(db: Session) -> None:
    """The worker's chore that forgets the responses older than a day."""
    db.execute(delete(IdempotentResponse).where(IdempotentResponse.created_at <= utcnow() - KEPT_FOR))


def body_sha256(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


def _lock(attempt: Attempt) -> int:
    """The advisory lock of one principal's key: 64 bits of their hash, as PostgreSQL's bigint."""
    digest = hashlib.sha256(f"idempotency\n{attempt.user_id}\n{attempt.key}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)
