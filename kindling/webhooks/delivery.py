"""The webhook worker: claim due deliveries, send them signed, record each attempt, schedule retries.

Any number of workers may run side by side (`kindling worker` processes, the embedded
thread of `kindling serve`). A claim is one UPDATE that leases due deliveries to one
worker: on PostgreSQL its rows come from `FOR UPDATE SKIP LOCKED`, so workers never wait
for each other; SQLite runs writes one at a time, which gives the same guarantee (and
no gain from a second worker). The request goes out after the claim has committed, and
its result is written by a second short transaction only if the lease is still the
worker's own. A worker that dies mid-attempt leaves a lease that runs out, and the
delivery is tried again with the same `webhook-id`: delivery is at least once.

The same loop runs the chores it is given at start and then hourly: `kindling worker` and
the embedded thread publish the wellbeing weeks that ended (docs/decisions.md §7) and delete
wellbeing comments older than WELLBEING_COMMENT_RETENTION_DAYS (docs/decisions.md §15). Its tasks
run every round and pace themselves: the evidence checkpoints, and on PostgreSQL the rewrite of
the tables erasures changed.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import datetime as dt
import logging
import random
import threading
import time
from collections.abc import Callable, Sequence

import requests
from sqlalchemy import func, or_, select, update
from sqlalchemy.orm import Session, sessionmaker
from standardwebhooks import Webhook

from kindling import __version__
from kindling.config import Settings
from kindling.outbox.models import WebhookDelivery, WebhookEndpoint, WebhookEvent
from kindling.platform.base import new_id, utcnow
from kindling.platform.database import changed_rows, make_engine, make_session_factory, truncate_write_ahead_log
from kindling.platform.destinations import DestinationPolicy, RefusedDestination, check_url, session
from kindling.webhooks.endpoints import disable_endpoint

log = logging.getLogger(__name__)

TIMEOUT_SECONDS = 10
# Longer than any attempt can take, so a lease only runs out when its worker is gone.
LEASE = dt.timedelta(minutes=2)
BATCH = 10
FIRST_RETRY_SECONDS = 5
MAX_RETRY_SECONDS = 3600
GIVE_UP_AFTER = dt.timedelta(hours=24)
DISABLE_AFTER = dt.timedelta(days=5)
USER_AGENT = f"Kindling-Webhooks/{__version__}"
# How often the worker runs its chores (publishing ended wellbeing weeks, deleting old comments).
CHORES_EVERY = 3600.0
# Housekeeping the worker loop runs besides delivery, given a session it commits.
Chore = Callable[[Session], None]


@dataclasses.dataclass(frozen=True)
class Attempt:
    """One claimed delivery, with everything needed to send it outside any transaction."""

    delivery_id: str
    claim_token: str
    number: int
    endpoint_id: str
    url: str
    secrets: tuple[str, ...]
    event_id: str
    event_created_at: dt.datetime
    body: str


@dataclasses.dataclass(frozen=True)
class Outcome:
    delivered: bool
    status_code: int | None = None
    error: str | None = None


def claim(session_factory: sessionmaker[Session], *, now: dt.datetime, limit: int = BATCH) -> list[Attempt]:
    """Lease up to `limit` due deliveries of enabled endpoints to this worker, and count their attempt."""
    token = new_id()
    due = (
        select(WebhookDelivery.id)
        .join(WebhookEndpoint, WebhookEndpoint.id == WebhookDelivery.endpoint_id)
        .where(
            WebhookDelivery.status == "pending",
            WebhookDelivery.next_attempt_at <= now,
            or_(WebhookDelivery.locked_until.is_(None), WebhookDelivery.locked_until <= now),
            WebhookEndpoint.enabled.is_(True),
        )
        .order_by(WebhookDelivery.next_attempt_at)
        .limit(limit)
        .with_for_update(skip_locked=True, of=WebhookDelivery)
    )
    with session_factory() as db, db.begin():
        db.execute(
            update(WebhookDelivery)
            .where(WebhookDelivery.id.in_(due))
            .values(
                claim_token=token,
                locked_until=now + LEASE,
                attempts=WebhookDelivery.attempts + 1,
                last_attempt_at=now,
            )
            .execution_options(synchronize_session=False)
        )
        rows = db.execute(
            select(WebhookDelivery, WebhookEndpoint, WebhookEvent)
            .join(WebhookEndpoint, WebhookEndpoint.id == WebhookDelivery.endpoint_id)
            .join(WebhookEvent, WebhookEvent.id == WebhookDelivery.event_id)
            .where(WebhookDelivery.claim_token == token)
        ).all()
        return [_attempt(delivery, endpoint, event, now, token) for delivery, endpoint, event in rows]


def _attempt(
    delivery: WebhookDelivery, endpoint: WebhookEndpoint, event: WebhookEvent, now: dt.datetime, claim_token: str
) -> Attempt:
    secrets = [endpoint.secret]
    if endpoint.previous_secret and endpoint.previous_secret_expires_at and endpoint.previous_secret_expires_at > now:
        secrets.append(endpoint.previous_secret)
    return Attempt(
        delivery_id=delivery.id,
        claim_token=claim_token,
        number=delivery.attempts,
        endpoint_id=endpoint.id,
        url=endpoint.url,
        secrets=tuple(secrets),
        event_id=event.id,
        event_created_at=event.created_at,
        body=event.body,
    )


def signed_headers(attempt: Attempt, sent_at: dt.datetime) -> dict[str, str]:
    """Standard Webhooks headers: the stable event id, the send time, one signature per live secret."""
    sent_at = sent_at.replace(microsecond=0)
    signatures = " ".join(Webhook(secret).sign(attempt.event_id, sent_at, attempt.body) for secret in attempt.secrets)
    return {
        "webhook-id": attempt.event_id,
        "webhook-timestamp": str(int(sent_at.timestamp())),
        "webhook-signature": signatures,
        "content-type": "application/json",
        "user-agent": USER_AGENT,
    }


def send(attempt: Attempt, policy: DestinationPolicy) -> Outcome:
    """POST the event to its endpoint once; any 2xx answer delivers it. Redirects are not followed."""
    try:
        check_url(attempt.url, policy, resolve=False)
        with session(policy) as http:
            response = http.post(
                attempt.url,
                data=attempt.body.encode(),
                headers=signed_headers(attempt, utcnow()),
                timeout=TIMEOUT_SECONDS,
                allow_redirects=False,
                stream=True,  # the answer's body is never read
            )
            response.close()
    except RefusedDestination as refused:
        return Outcome(False, error=str(refused))
    except requests.Timeout:
        return Outcome(False, error=f"No answer within {TIMEOUT_SECONDS} s")
    except requests.exceptions.SSLError:
        return Outcome(False, error="TLS handshake failed")
    except requests.RequestException:
        return Outcome(False, error="Could not connect")
    code = response.status_code
    if 200 <= code < 300:
        return Outcome(True, status_code=code)
    error = f"HTTP {code} (redirects are not followed)" if 300 <= code < 400 else f"HTTP {code}"
    return Outcome(False, status_code=code, error=error)


def retry_delay(attempts: int) -> dt.timedelta:
    """Wait before the next try after `attempts` failed ones: 5 s doubling to 1 h, ±20% jitter."""
    seconds = min(MAX_RETRY_SECONDS, FIRST_RETRY_SECONDS * 2 ** min(attempts - 1, 20))
    return dt.timedelta(seconds=seconds * random.uniform(0.8, 1.2))


def record(
    session_factory: sessionmaker[Session], results: Sequence[tuple[Attempt, Outcome]], *, now: dt.datetime
) -> int:
    """Write a batch's results and schedule what follows, in one transaction.

    Returns how many were recorded; a result whose lease ran out meanwhile (another
    worker has claimed the delivery again) changes nothing.
    """
    recorded = 0
    with session_factory() as db, db.begin():
        # Endpoint rows are written first and in one order, so concurrent recorders (and
        # disabling) never wait on each other in a cycle on PostgreSQL; on SQLite the first
        # statement being a write takes the write lock before anything is read.
        for attempt, outcome in sorted(results, key=lambda result: (result[0].endpoint_id, result[0].delivery_id)):
            with db.begin_nested() as savepoint:
                if _record_one(db, attempt, outcome, now):
                    recorded += 1
                else:
                    savepoint.rollback()
    return recorded


def _record_one(db: Session, attempt: Attempt, outcome: Outcome, now: dt.datetime) -> bool:
    values: dict = {
        "locked_until": None,
        "claim_token": None,
        "last_response_code": outcome.status_code,
        "last_error": outcome.error,
    }
    if outcome.delivered:
        values |= {"status": "delivered", "delivered_at": now, "next_attempt_at": None}
    else:
        retry_at = now + retry_delay(attempt.number)
        if retry_at > attempt.event_created_at + GIVE_UP_AFTER:
            values |= {"status": "failed", "next_attempt_at": None}
        else:
            values |= {"next_attempt_at": retry_at}
    db.execute(
        update(WebhookEndpoint)
        .where(WebhookEndpoint.id == attempt.endpoint_id)
        .values(failing_since=None if outcome.delivered else func.coalesce(WebhookEndpoint.failing_since, now))
        .execution_options(synchronize_session=False)
    )
    changed = changed_rows(
        db,
        update(WebhookDelivery)
        .where(WebhookDelivery.id == attempt.delivery_id, WebhookDelivery.claim_token == attempt.claim_token)
        .values(**values)
        .execution_options(synchronize_session=False),
    )
    if changed != 1:
        return False
    if not outcome.delivered:
        _disable_if_failing_too_long(db, attempt.endpoint_id, now)
    return True


def _disable_if_failing_too_long(db: Session, endpoint_id: str, now: dt.datetime) -> None:
    endpoint = db.get(WebhookEndpoint, endpoint_id)
    if (
        endpoint is not None
        and endpoint.enabled
        and endpoint.failing_since is not None
        and now - endpoint.failing_since >= DISABLE_AFTER
    ):
        log.warning("disabling webhook endpoint %s: failing since %s", endpoint.id, endpoint.failing_since)
        disable_endpoint(db, endpoint=endpoint, reason="Endpoint disabled after failing for 5 days", now=now)


def deliver_due(
    session_factory: sessionmaker[Session],
    policy: DestinationPolicy,
    *,
    now: dt.datetime | None = None,
    limit: int = BATCH,
) -> int:
    """Claim, send side by side and record one batch of due deliveries; returns how many were tried.

    `now` fixes the clock for scheduling (tests); by default it is the real time.
    """
    attempts = claim(session_factory, now=now or utcnow(), limit=limit)
    if not attempts:
        return 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(attempts)) as pool:
        outcomes = list(pool.map(lambda attempt: send(attempt, policy), attempts))
    record(session_factory, list(zip(attempts, outcomes, strict=True)), now=now or utcnow())
    return len(attempts)


class Worker:
    """Delivers due webhooks until stopped: the loop of `kindling worker` and of the embedded thread."""

    def __init__(
        self, settings: Settings, *, idle_seconds: float = 1.0, tasks: tuple = (), chores: Sequence[Chore] = ()
    ) -> None:
        self.engine = make_engine(settings.database_url)
        self.session_factory = make_session_factory(self.engine)
        # Periodic work of other slices run between rounds (the evidence checkpoints), given the session factory.
        self.tasks = tuple(task(self.session_factory) for task in tasks)
        self.policy = DestinationPolicy.from_settings(settings)
        self.idle_seconds = idle_seconds
        self.chores = tuple(chores)
        self._chores_due = 0.0
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def run(self, *, once: bool = False) -> None:
        """Deliver until `stop()` (or, with `once`, until nothing more is due)."""
        try:
            while not self._stopping.is_set():
                for task in self.tasks:
                    task()
                if self.chores and time.monotonic() >= self._chores_due:
                    self._do_chores()
                try:
                    tried = deliver_due(self.session_factory, self.policy)
                except Exception as exc:  # a database outage must not end the worker
                    log.warning("webhook delivery round failed: %s: %s", type(exc).__name__, exc)
                    tried = 0
                if tried < BATCH:
                    if once:
                        return
                    self._stopping.wait(self.idle_seconds)
        finally:
            self.engine.dispose()

    def _do_chores(self) -> None:
        """Run each chore in a transaction of its own, at most once every CHORES_EVERY seconds."""
        try:
            for chore in self.chores:
                with self.session_factory() as db:
                    chore(db)
                    db.commit()
            # What the chores deleted must not stay behind in an embedded database's log.
            truncate_write_ahead_log(self.engine)
        except Exception as exc:  # a database outage must not end the worker
            log.warning("worker chore failed: %s: %s", type(exc).__name__, exc)
            return
        self._chores_due = time.monotonic() + CHORES_EVERY

    def stop(self) -> None:
        """Ask the loop to end after its current batch, and wait for the thread if there is one."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout=LEASE.total_seconds())

    def start_thread(self) -> None:
        """Run in a daemon thread (embedded mode)."""
        self._thread = threading.Thread(target=self.run, name="kindling-webhooks", daemon=True)
        self._thread.start()
