"""Workers against committed data: concurrent claims, rolled-back transactions, `kindling worker`
and the embedded thread of `kindling serve`."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest
import requests
from sqlalchemy import func, select

from kindling import outbox
from kindling.accounts import service as accounts
from kindling.consulting import clients, milestones
from kindling.outbox.models import WebhookDelivery, WebhookEvent
from kindling.platform.database import make_engine, make_session_factory, upgrade
from kindling.platform.destinations import DestinationPolicy
from kindling.webhooks import endpoints as webhook_endpoints
from kindling.webhooks.delivery import deliver_due
from tests.factories import PASSWORD
from tests.helpers import sign_up

pytestmark = pytest.mark.live
LOOPBACK = DestinationPolicy(allow_private=True)


@pytest.fixture
def database(fresh_database_url):
    """A migrated database of the test backend whose transactions really commit."""
    upgrade(fresh_database_url)
    engine = make_engine(fresh_database_url)
    yield fresh_database_url, make_session_factory(engine)
    engine.dispose()


def consultant_with_endpoint(session_factory, url: str) -> str:
    with session_factory() as db, db.begin():
        user = accounts.sign_up(db, email="c@example.test", password=PASSWORD, name="C", account_type="consultant")
        webhook_endpoints.create_endpoint(
            db, consultant_id=user.id, url=url, events=list(outbox.EVENT_TYPES), description=None, policy=LOOPBACK
        )
        return user.id


def test_two_workers_never_send_the_same_attempt(database, receiver):
    url, session_factory = database
    consultant_id = consultant_with_endpoint(session_factory, receiver.url)
    with session_factory() as db, db.begin():
        for n in range(40):
            outbox.emit(db, consultant_id=consultant_id, type="client.invited", data={"n": n})
    receiver.delay = 0.02  # keeps both workers busy at the same time
    engines = [make_engine(url) for _ in range(2)]
    start = threading.Barrier(2)
    errors = []

    def work(engine):
        factory = make_session_factory(engine)
        start.wait()
        try:
            while deliver_due(factory, LOOPBACK, limit=3):
                pass
        except Exception as exc:  # surfaced by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(engine,)) for engine in engines]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    for engine in engines:
        engine.dispose()

    assert errors == []
    assert len(receiver.requests) == 40 and len(set(receiver.ids())) == 40
    with session_factory() as db:
        rows = db.scalars(select(WebhookDelivery)).all()
        assert len(rows) == 40
        assert {(row.status, row.attempts) for row in rows} == {("delivered", 1)}


def test_events_of_a_rolled_back_transaction_never_appear(database, receiver):
    _, session_factory = database
    consultant_id = consultant_with_endpoint(session_factory, receiver.url)
    with session_factory() as db:
        db.begin()
        outbox.emit(db, consultant_id=consultant_id, type="client.cancelled", data={"kept": False})
        db.rollback()
    with session_factory() as db, db.begin():
        kept = outbox.emit(db, consultant_id=consultant_id, type="client.cancelled", data={"kept": True})

    while deliver_due(session_factory, LOOPBACK):
        pass
    assert receiver.ids() == [kept.id]
    with session_factory() as db:
        assert db.scalar(select(func.count()).select_from(WebhookEvent)) == 1


def test_kindling_worker_once_delivers_what_is_due(database, receiver):
    url, session_factory = database
    consultant_id = consultant_with_endpoint(session_factory, receiver.url)
    with session_factory() as db, db.begin():
        event = outbox.emit(db, consultant_id=consultant_id, type="theme.updated", data={})
    result = subprocess.run(
        [sys.executable, "-m", "kindling.cli", "worker", "--once"],
        env={**os.environ, "DATABASE_URL": url, "WEBHOOK_ALLOW_PRIVATE_URLS": "true", "LOG_LEVEL": "WARNING"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert receiver.ids() == [event.id]


def test_embedded_serve_delivers_from_its_own_thread(tmp_path, live_server, receiver):
    url = f"sqlite:///{tmp_path / 'embedded.db'}"
    server = live_server(DATABASE_URL=url, REDIS_URL="", WEBHOOK_ALLOW_PRIVATE_URLS="true")
    consultant = sign_up(server.url, accountType="consultant")
    created = requests.post(
        server.url + "/api/webhooks/endpoints",
        json={"url": receiver.url, "events": ["client.accepted"]},
        headers=consultant.headers,
        timeout=10,
    )
    assert created.status_code == 201, created.text
    engine = make_engine(url)
    with make_session_factory(engine)() as db, db.begin():
        event = outbox.emit(db, consultant_id=consultant.id, type="client.accepted", data={})
    engine.dispose()
    receiver.wait_for(1)
    assert receiver.ids() == [event.id]


def test_racing_transactions_emit_a_milestone_once(database, settings, receiver):
    if settings.embedded:
        pytest.skip("SQLite runs one writing transaction at a time, so there is no race to lose")
    _, session_factory = database
    consultant_id = consultant_with_endpoint(session_factory, receiver.url)
    with session_factory() as db, db.begin():
        organization_id = accounts.create_organization(db, name="Racing Org").id
        invitation = clients.send_invitation(db, consultant_id=consultant_id, organization_id=organization_id)
        clients.accept_invitation(db, organization_id=organization_id, invitation_id=invitation.id)
    first_inserted = threading.Event()
    reached = {}

    def first():
        with session_factory() as db, db.begin():
            reached["first"] = milestones.record_milestones(
                db, organization_id=organization_id, kindness_acts_total=100
            )
            first_inserted.set()
            # Commits while the second transaction waits on the same milestone row.
            time.sleep(0.5)

    def second():
        first_inserted.wait()
        with session_factory() as db, db.begin():
            reached["second"] = milestones.record_milestones(
                db, organization_id=organization_id, kindness_acts_total=101
            )

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert reached == {"first": [("kindness_acts", 100)], "second": []}
    with session_factory() as db:
        assert db.scalar(select(func.count()).where(WebhookEvent.type == "portfolio.milestone")) == 1
