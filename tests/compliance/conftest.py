"""Fixtures of the compliance and portfolio tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def busy(make):
    """An organization with a known month: 4 acts, 3 check-ins and 4 donations, 6 of them evidenced."""
    admin = make.admin()
    first, second = make.member(admin), make.member(admin)
    make.activity.act(second, level=3, category="community")  # approved by the admin
    make.activity.act(admin, level=1)
    make.activity.act(admin, level=5, category="wellbeing")
    make.activity.act(first, level=2, category="wellbeing")
    make.activity.check_in(first, admin, hours=3)
    make.activity.check_in(admin, admin, hours=1.5)
    make.activity.check_in(second, admin, verified=False, hours=2)
    make.activity.donation(first, amount=2500)
    make.activity.donation(second, amount=1000)
    make.activity.donation(first, amount=500, status="pending")
    make.activity.donation(admin, amount=700, status="failed")
    return admin
