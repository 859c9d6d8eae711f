"""Fixtures: one app per test session, each test inside a rolled-back transaction.

The backend comes from the environment: TEST_DATABASE_URL (default: a temporary
SQLite file) and TEST_REDIS_URL (default: none, so the in-process cache and limiter).
"""

from __future__ import annotations

import dataclasses
import os
import time

import pytest

from kindling.accounts.principal_cache import principals
from kindling.config import Settings
from kindling.platform.database import upgrade
from kindling.web.app import create_app
from tests import factories
from tests.factories import donations, identity

# `live` before the servers that import it, so that pytest rewrites its assertions too.
pytest_plugins = [
    "tests.servers.live",
    "tests.servers.databases",
    "tests.servers.dns_server",
    "tests.servers.fake_provider",
    "tests.servers.fake_slack",
    "tests.servers.mail",
    "tests.servers.openid_provider",
    "tests.servers.receiver",
    "tests.servers.silent",
]


@pytest.fixture(scope="session")
def settings(tmp_path_factory, mail_server, dns_server) -> Settings:
    url = os.environ.get("TEST_DATABASE_URL") or f"sqlite:///{tmp_path_factory.mktemp('db') / 'kindling.db'}"
    return Settings(
        database_url=url,
        redis_url=os.environ.get("TEST_REDIS_URL") or None,
        environment="test",
        validate_responses=True,
        # Attestation mails go to a real SMTP server on loopback (tests/servers/mail.py).
        smtp_url=mail_server.url,
        mail_from="Kindling <attest@kindling.test>",
        public_url="https://kindling.test",
        # Domain verification asks a real DNS server on loopback (tests/servers/dns_server.py).
        dns_nameservers=(("127.0.0.1", dns_server.port),),
    )


@pytest.fixture(scope="session")
def app(settings):
    upgrade(settings.database_url)
    return create_app(settings)


@pytest.fixture(scope="session")
def runtime(app):
    return app.app.extensions["kindling"]


@pytest.fixture(autouse=True)
def db(request, runtime):
    """A session on a connection whose outer transaction every test rolls back.

    Tests marked `live` talk to separate server processes and skip it.
    """
    runtime.cache.clear()
    principals.clear()
    runtime.limiter.reset()
    if request.node.get_closest_marker("live"):
        yield None
        return
    connection = runtime.engine.connect()
    outer = connection.begin()
    runtime.session_factory.configure(bind=connection, join_transaction_mode="create_savepoint")
    session = runtime.session_factory()
    yield session
    session.close()
    runtime.session_factory.configure(bind=runtime.engine, join_transaction_mode="conditional_savepoint")
    outer.rollback()
    connection.close()


@pytest.fixture
def settings_with(monkeypatch, runtime):
    """Run the app with some settings changed for one test: `settings_with(field=value, …)`."""

    def change(**fields) -> None:
        monkeypatch.setattr(runtime, "settings", dataclasses.replace(runtime.settings, **fields))

    return change


@pytest.fixture
def payment_secret(settings_with):
    """The payment provider's webhook secret set, so that its signed events are taken."""
    settings_with(payment_webhook_secret=donations.PAYMENT_SECRET)


@pytest.fixture
def identity_secret(settings_with):
    """The identity provider's webhook secret set, so that its signed events are taken."""
    settings_with(auth_webhook_secret=identity.IDENTITY_SECRET)


@pytest.fixture
def client(app):
    with app.test_client() as test_client:
        yield test_client


@pytest.fixture
def make(db, runtime, mail_server):
    """The factories of test data, bound to the test's database session and the app's cache."""
    return factories.Factories(db, runtime.cache, mailer=runtime.mailer, mailbox=mail_server)


@pytest.fixture
def rate_window():
    """Start the test early in a one-minute rate-limit window (they are aligned to the clock), so
    that the requests it counts against a limit all fall in one window."""
    left = 60 - time.time() % 60
    if left < 20:
        time.sleep(left + 0.05)
