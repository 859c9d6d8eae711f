"""An erased person's name and email leave PostgreSQL's files once the worker has run (docs/decisions.md §15).

Read from the relation files themselves, after a CHECKPOINT, on a PostgreSQL server of the
test's own: every table's heap, every index and every TOAST table and its index.
"""

from __future__ import annotations

import base64
import glob
import os
import pathlib
import subprocess
import sys
import uuid

import pytest
from sqlalchemy import func, select, text

from kindling.config import Settings
from kindling.platform.cache import MemoryCache
from kindling.platform.database import make_engine, make_session_factory
from kindling.privacy.models import StorageCleanup
from kindling.web.app import create_app
from tests import factories
from tests.factories import PASSWORD
from tests.helpers import scim

pytestmark = pytest.mark.live

# Every relation of the application's tables that has files: heaps, indexes, TOAST tables and
# TOAST indexes.
RELATIONS = text(
    """
    WITH tables AS (SELECT oid, reltoastrelid FROM pg_class WHERE relnamespace = current_schema()::regnamespace)
    SELECT c.oid::regclass::text, c.relkind, pg_relation_filepath(c.oid) FROM pg_class AS c
    WHERE pg_relation_filepath(c.oid) IS NOT NULL AND (
        c.relnamespace = current_schema()::regnamespace
        OR c.oid IN (SELECT reltoastrelid FROM tables)
        OR c.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid IN (SELECT reltoastrelid FROM tables))
    )
    """
)


def files_holding(engine, data_directory: str, secrets: tuple[str, ...]) -> dict[tuple[str, str], set[str]]:
    """After a CHECKPOINT (the data pages on disk): which secrets each relation's files hold."""
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        connection.exec_driver_sql("CHECKPOINT")
        relations = connection.execute(RELATIONS).all()
    found = {}
    for relation, kind, path in relations:
        # The main fork's segments (`path`, `path.1`, …) and the free-space and visibility maps.
        segments = sorted(glob.glob(os.path.join(data_directory, path) + "*"))
        content = b"".join(pathlib.Path(segment).read_bytes() for segment in segments)
        held = {secret for secret in secrets if secret.encode() in content}
        if held:
            found[(relation, kind)] = held
    return found


def run_worker_once(url: str) -> None:
    worker = subprocess.run(
        [sys.executable, "-m", "kindling.cli", "worker", "--once"],
        env={**os.environ, "DATABASE_URL": url, "ENVIRONMENT": "test"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert worker.returncode == 0, worker.stderr


def test_after_the_worker_runs_the_erased_name_and_email_are_in_no_relation_file(postgres_service, mail_server):
    url = postgres_service.url
    marker = uuid.uuid4().hex[:12]
    name, email = f"Zephyrine Quux{marker}", f"zq.{marker}@example.test"
    secrets = (name, email)
    engine = make_engine(url)
    app = create_app(Settings(database_url=url, environment="test", smtp_url=mail_server.url))
    try:
        with make_session_factory(engine)() as session:
            make = factories.Factories(session, MemoryCache())
            admin = make.admin()
            headers = make.scim_token(admin)
            session.commit()
        with app.test_client() as client:
            # Provisioned by the directory, whose copy of the resource is long and random enough to
            # be stored out of line and uncompressed: in scim_users' TOAST table.
            resource = scim.user(
                email,
                displayName=name,
                emails=[{"value": email, "type": "work", "primary": True}],
                name={"formatted": f"{name} {base64.b64encode(os.urandom(6000)).decode()}"},
                password=PASSWORD,
            )
            created = client.post("/scim/v2/Users", json=resource, headers=headers)
            assert created.status_code == 201, created.text
            person = created.json()["id"]
        # Signed in once, so the erasure also has a session to revoke.
        with app.test_client() as person_client:
            signed_in = person_client.post("/api/auth/sign-in", json={"email": email, "password": PASSWORD})
            assert signed_in.status_code == 200, signed_in.text
        with app.test_client() as client:
            erased = client.post(f"/api/organization/members/{person}/erase", headers=admin.headers)
            assert erased.status_code == 200, erased.text

        # The old row versions still hold them: in the heap and index of users, and in the TOAST
        # table of the directory's copy.
        before = files_holding(engine, postgres_service.data, secrets)
        assert before[("users", "r")] == before[("scim_users", "r")] == set(secrets)
        assert before[("uq_users_email", "i")] == {email} and before[("ix_users_organization_id_name", "i")] == {name}
        assert [held for (_, kind), held in before.items() if kind == "t"] == [set(secrets)]
        with engine.connect() as connection:
            pending = set(connection.scalars(select(StorageCleanup.table_name)))
        assert {"users", "scim_users", "sessions"} <= pending

        run_worker_once(url)
        assert files_holding(engine, postgres_service.data, secrets) == {}
        with engine.connect() as connection:
            assert connection.scalar(select(func.count()).select_from(StorageCleanup)) == 0
    finally:
        engine.dispose()


def test_a_snapshot_older_than_the_erasure_holds_the_rewrite_back_until_it_ends(postgres_service, mail_server):
    """A rewrite copies the row versions an open snapshot may still read, so it waits for that snapshot."""
    url = postgres_service.url
    marker = uuid.uuid4().hex[:12]
    name, email = f"Yolanda Quux{marker}", f"yq.{marker}@example.test"
    engine = make_engine(url)
    app = create_app(Settings(database_url=url, environment="test", smtp_url=mail_server.url))
    reader = engine.connect().execution_options(isolation_level="REPEATABLE READ")
    try:
        with make_session_factory(engine)() as session:
            make = factories.Factories(session, MemoryCache())
            admin = make.admin()
            person = make.member(admin, name=name, email=email)
            session.commit()
        # A long report on another table, say, whose snapshot was taken before the erasure: it
        # holds no lock on users, but may still read the person's old row version.
        reader.begin()
        assert reader.scalar(text("SELECT count(*) FROM organizations")) >= 1
        with app.test_client() as client:
            erased = client.post(f"/api/organization/members/{person.user.id}/erase", headers=admin.headers)
            assert erased.status_code == 200, erased.text

        run_worker_once(url)
        assert files_holding(engine, postgres_service.data, (name, email))[("users", "r")] == {name, email}
        with engine.connect() as connection:
            assert "users" in set(connection.scalars(select(StorageCleanup.table_name)))

        reader.rollback()
        run_worker_once(url)
        assert files_holding(engine, postgres_service.data, (name, email)) == {}
    finally:
        reader.close()
        engine.dispose()
