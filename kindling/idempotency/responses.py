"""Finding, keeping and forgetting the responses of keyed writes (docs/decisions.md §16).

A key is the caller's: two people may use the same one. While a keyed write runs, its
transaction holds the key (an advisory lock on PostgreSQL; SQLite's single writer queues the
second request behind the first), and its response is inserted in that same transaction, so
the effect and the stored response commit together or not at all.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib

from sqlalchemy import delete, func, select
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
    if db.get_bind().dialect.name == "postgresql" and not db.scalar(
        select(func.pg_try_advisory_xact_lock(_lock(attempt)))
    ):
        raise key_in_use()
    stored = db.scalar(
        select(IdempotentResponse).where(
            IdempotentResponse.user_id == attempt.user_id,
            IdempotentResponse.key == attempt.key,
            IdempotentResponse.created_at > now - KEPT_FOR,
        )
    )
    if stored is None:
        return None
    if (stored.operation, stored.body_sha256) != (attempt.operation, attempt.body_sha256):
        raise IdempotencyKeyReused("This Idempotency-Key was used for another request: use a new key for a new request")
    return Answer(stored.status, stored.headers, stored.body)


def keep(db: Session, attempt: Attempt, answer: Answer, *, now: dt.datetime) -> None:
    """Store the answer to `attempt`, in the transaction of its effect; a key expired but not yet
    purged is taken over."""
    insert = postgresql.insert if db.get_bind().dialect.name == "postgresql" else sqlite.insert
    values = {
        "user_id": attempt.user_id,
        "key": attempt.key,
        "operation": attempt.operation,
        "body_sha256": attempt.body_sha256,
        "status": answer.status,
        "headers": answer.headers,
        "body": answer.body,
        "created_at": now,
    }
    db.execute(
        insert(IdempotentResponse)
        .values(values)
        .on_conflict_do_update(
            index_elements=["user_id", "key"],
            set_={name: value for name, value in values.items() if name not in ("user_id", "key")},
            where=IdempotentResponse.created_at <= now - KEPT_FOR,
        )
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
