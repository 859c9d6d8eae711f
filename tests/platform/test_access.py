"""The authorization building blocks: who a caller is, and which declared roles admit them (docs/decisions.md §3)."""

from __future__ import annotations

import pytest

from kindling.errors import Forbidden
from kindling.platform.access import Principal
from kindling.web.operations import Operation


def caller(account_type="member", role="member", organization_id="org") -> Principal:
    return Principal("user", account_type, organization_id, role, "session")


def admits(roles: set[str], who: Principal | None) -> bool:
    return Operation("op", frozenset(roles), None).admits(who)


def test_consultant_only():
    assert admits({"consultant"}, caller("consultant", None, None))
    assert not admits({"consultant"}, caller())


def test_members_of_an_organization():
    members = {"admin", "manager", "member"}
    assert all(admits(members, caller(role=role)) for role in members)
    assert not admits(members, caller("consultant", None, None))
    # A member account without an organization holds no role in one.
    assert not admits(members, caller(organization_id=None))


def test_admin_only():
    assert admits({"admin"}, caller(role="admin"))
    for who in (caller(role="member"), caller(role="manager"), caller("consultant", None, None)):
        assert not admits({"admin"}, who)


def test_organisers_are_admins_and_managers():
    for role in ("admin", "manager"):
        assert admits({"admin", "manager"}, caller(role=role))
    for who in (caller(role="member"), caller("consultant", None, None)):
        assert not admits({"admin", "manager"}, who)


def test_anyone_includes_no_caller_at_all():
    assert admits({"anyone"}, None)
    assert not admits({"admin", "manager", "member", "consultant"}, None)


def test_member_of_is_the_organization_of_a_member_and_refuses_anyone_without_one():
    assert caller(organization_id="org").member_of == "org"
    for who in (caller("consultant", None, None), caller(organization_id=None)):
        with pytest.raises(Forbidden):
            _ = who.member_of
