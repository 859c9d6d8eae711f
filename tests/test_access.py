"""The authorization building blocks every endpoint group uses (docs/decisions.md §3)."""

from __future__ import annotations

import pytest

from kindling.errors import Forbidden
from kindling.platform import access


def principal(account_type="member", role="member", organization_id="org"):
    return access.Principal("user", account_type, organization_id, role, "session").as_token_info()


def test_consultant_only():
    assert access.consultant(principal("consultant", None, None)).is_consultant
    with pytest.raises(Forbidden):
        access.consultant(principal())


def test_member_only():
    assert access.member(principal()).organization_id == "org"
    with pytest.raises(Forbidden):
        access.member(principal("consultant", None, None))


def test_admin_only():
    assert access.admin(principal(role="admin")).is_admin
    with pytest.raises(Forbidden):
        access.admin(principal(role="member"))
    with pytest.raises(Forbidden):
        access.admin(principal("consultant", None, None))
    with pytest.raises(Forbidden):
        access.admin(principal(role="manager"))


def test_organisers_are_admins_and_managers():
    for role in ("admin", "manager"):
        assert access.organiser(principal(role=role)).is_organiser
    for token_info in (principal(role="member"), principal("consultant", None, None)):
        with pytest.raises(Forbidden):
            access.organiser(token_info)
