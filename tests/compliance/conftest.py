"""Fixtures of the compliance and portfolio tests."""

from __future__ import annotations

import pytest

from tests.factories.activity import ActivityFactory


@pytest.fixture
def activity(db, runtime) -> ActivityFactory:
    """Activity records made in the test's transaction."""
    return ActivityFactory(db, runtime.cache)


@pytest.fixture
def busy(make, activity):
    """An organization with a known month: 4 acts, 3 check-ins and 4 donations, 6 of them evidenced."""
    admin = make.admin()
    first, second = make.member(admin), make.member(admin)
    activity.act(admin, level=3, category="community")
    activity.act(admin, level=1)
    activity.act(admin, level=5, category="wellbeing")
    activity.act(first, level=2, category="wellbeing")
    activity.check_in(first, admin, hours=3)
    activity.check_in(admin, admin, hours=1.5)
    activity.check_in(second, admin, verified=False, hours=2)
    activity.donation(first, amount=2500)
    activity.donation(second, amount=1000)
    activity.donation(first, amount=500, status="pending")
    activity.donation(admin, amount=700, status="failed")
    return admin
