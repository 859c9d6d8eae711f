"""Concurrent appends in one organization: seq stays gap-free and the chain intact (PostgreSQL)."""

from __future__ import annotations

import threading
import uuid

import pytest
from sqlalchemy import text
from sqlalchemy.orm import Session

from kindling.accounts.models import Organization
from kindling.evidence import log as evidence
from kindling.kindness.events import ACT_RECORDED
from tests.helpers.cleanup import forget_evidence

THREADS, WRITES = 4, 50


@pytest.fixture
def committed_organization(runtime, db):
    """An organization committed for real, as concurrent transactions must see it; removed after."""
    if runtime.engine.dialect.name != "postgresql":
        pytest.skip("SQLite has one writer at a time; the concurrency of appends is a PostgreSQL matter")
    suffix = uuid.uuid4().hex[:12]
    with Session(runtime.engine) as session, session.begin():
        organization = Organization(name=f"Concurrent {suffix}", slug=f"concurrent-{suffix}", join_code=suffix)
        session.add(organization)
        session.flush()
        organization_id = organization.id
    yield organization_id
    with Session(runtime.engine) as session, session.begin():
        forget_evidence(session, organization_id)
        session.execute(text("DELETE FROM organizations WHERE id = :id"), {"id": organization_id})


def test_four_writers_get_seq_1_to_200_and_an_intact_chain(runtime, committed_organization):
    start = threading.Barrier(THREADS)
    failures = []

    def write(worker: int) -> None:
        try:
            start.wait()
            for n in range(WRITES):
                with Session(runtime.engine) as session, session.begin():
                    evidence.append(
                        session,
                        organization_id=committed_organization,
                        type=ACT_RECORDED,
                        subject=("act", f"{worker}-{n}"),
                        actor_id=None,
                        data={"requestedLevel": 1, "category": "community"},
                    )
        except Exception as exc:  # reported below: an assertion in a thread would be lost
            failures.append(exc)

    threads = [threading.Thread(target=write, args=(worker,)) for worker in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    with Session(runtime.engine) as session:
        seqs = session.scalars(
            text("SELECT seq FROM evidence_events WHERE organization_id = :id ORDER BY seq"),
            {"id": committed_organization},
        ).all()
        result = evidence.verify(session, organization_id=committed_organization)
    assert seqs == list(range(1, THREADS * WRITES + 1))
    assert result["intact"] and result["events"] == 200 and result["head"]["seq"] == 200
