"""Fixtures of the evidence log tests."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from kindling.kindness import acts as kindness
from tests.factories.principals import principal


@pytest.fixture
def logged(make):
    """An organization whose log holds 7 events: its two people joining, 3 acts, a check-in and an act change."""
    admin = make.admin()
    member = make.member(admin)
    make.activity.act(admin)
    act = make.activity.act(member, category="community")
    make.check_in(member, make.opportunity(admin))
    make.activity.act(member)
    kindness.update_act(make.db, make.cache, caller=principal(admin), act_id=act.id, verification_level=4)
    return admin


@pytest.fixture
def tamper(db):
    """Runs SQL on the stored log behind the service's back (on PostgreSQL past its trigger,
    as only the table's owner or a superuser could); the test's rollback undoes it."""

    def run(sql: str, **params) -> None:
        if db.get_bind().dialect.name == "postgresql":
            db.execute(text("SET LOCAL session_replication_role = replica"))
        db.execute(text(sql), params)
        if db.get_bind().dialect.name == "postgresql":
            db.execute(text("SET LOCAL session_replication_role = origin"))

    return run
