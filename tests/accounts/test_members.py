"""The organization's people: roles, the members list, role changes and removal (docs/decisions.md §2)."""

from __future__ import annotations

import threading
import uuid

import pytest
from sqlalchemy import select
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

from kindling.accounts import members
from kindling.accounts.models import User
from kindling.errors import Conflict
from tests import factories
from tests.factories import PASSWORD
from tests.helpers import assert_envelope
from tests.helpers.cleanup import forget

USER_FIELDS = {
    "id",
    "email",
    "name",
    "accountType",
    "organizationId",
    "role",
    "auditor",
    "createdAt",
    "managerId",
    "department",
    "employeeNumber",
    "groups",
}


def test_admins_and_managers_list_the_organization_by_name(client, make):
    admin = make.admin(name="Mia Admin")
    manager = make.manager(admin, name="Ada Manager")
    make.member(admin, name="Zoe Member")
    make.member(make.admin(), name="Bob Elsewhere")
    for caller in (admin, manager):
        response = client.get("/api/organization/members", headers=caller.headers)
        assert response.status_code == 200
        body = response.json()
        assert [(u["name"], u["role"]) for u in body["data"]] == [
            ("Ada Manager", "manager"),
            ("Mia Admin", "admin"),
            ("Zoe Member", "member"),
        ]
        assert body["nextCursor"] is None
        # Never a password hash, token or join code of anyone.
        assert all(set(user) == USER_FIELDS for user in body["data"])
        assert "join" not in response.text.lower() and "argon2" not in response.text


def test_members_list_pages_by_name(client, make):
    admin = make.admin(name="Person 00")
    for n in range(1, 6):
        make.member(admin, name=f"Person {n:02d}")
    make.member(admin, name="Person 03")  # a namesake: the id orders them
    names, cursor, pages = [], None, 0
    while True:
        query = "?limit=2" + (f"&cursor={cursor}" if cursor else "")
        body = client.get(f"/api/organization/members{query}", headers=admin.headers).json()
        names += [u["name"] for u in body["data"]]
        pages += 1
        cursor = body["nextCursor"]
        if cursor is None:
            break
    assert names == ["Person 00", "Person 01", "Person 02", "Person 03", "Person 03", "Person 04", "Person 05"]
    assert pages == 4
    assert_envelope(
        client.get("/api/organization/members?cursor=bm90LWEtY3Vyc29y", headers=admin.headers), 400, "invalid_cursor"
    )
    assert_envelope(client.get("/api/organization/members?limit=0", headers=admin.headers), 400, "validation_error")


def test_members_and_consultants_may_not_list(client, make):
    admin = make.admin()
    assert_envelope(client.get("/api/organization/members", headers=make.member(admin).headers), 403, "forbidden")
    assert_envelope(client.get("/api/organization/members", headers=make.consultant().headers), 403, "forbidden")
    assert_envelope(client.get("/api/organization/members"), 401, "unauthenticated")


def test_admin_changes_a_role_and_it_applies_at_the_next_request(client, make):
    admin = make.admin()
    member = make.member(admin)
    # A first request, so that the member's session is cached with the old role.
    assert_envelope(client.get("/api/organization/members", headers=member.headers), 403, "forbidden")
    response = client.patch(
        f"/api/organization/members/{member.user.id}", json={"role": "manager"}, headers=admin.headers
    )
    assert response.status_code == 200
    assert response.json()["data"]["role"] == "manager"
    assert set(response.json()["data"]) == USER_FIELDS
    assert client.get("/api/organization/members", headers=member.headers).status_code == 200
    assert client.get("/api/auth/session", headers=member.headers).json()["data"]["user"]["role"] == "manager"
    # A manager reads the people but changes nobody's role.
    assert_envelope(
        client.patch(f"/api/organization/members/{admin.user.id}", json={"role": "member"}, headers=member.headers),
        403,
        "forbidden",
    )
    client.patch(f"/api/organization/members/{member.user.id}", json={"role": "member"}, headers=admin.headers)
    assert_envelope(client.get("/api/organization/members", headers=member.headers), 403, "forbidden")


def test_the_last_admin_is_neither_demoted_nor_removed(client, make):
    admin = make.admin()
    own = f"/api/organization/members/{admin.user.id}"
    assert_envelope(client.patch(own, json={"role": "manager"}, headers=admin.headers), 409, "last_admin")
    assert_envelope(client.delete(own, headers=admin.headers), 409, "last_admin")
    assert client.patch(own, json={"role": "admin"}, headers=admin.headers).status_code == 200
    second = make.member(admin)
    client.patch(f"/api/organization/members/{second.user.id}", json={"role": "admin"}, headers=admin.headers)
    # With two admins one may step down; then the other is the last one.
    assert client.patch(own, json={"role": "member"}, headers=admin.headers).status_code == 200
    assert_envelope(
        client.delete(f"/api/organization/members/{second.user.id}", headers=second.headers), 409, "last_admin"
    )


def test_removal_revokes_sessions_at_once_and_keeps_the_record(client, make, db):
    admin = make.admin()
    manager = make.manager(admin)
    opportunity = make.opportunity(manager)
    assert client.get("/api/auth/session", headers=manager.headers).status_code == 200  # now cached
    assert client.delete(f"/api/organization/members/{manager.user.id}", headers=admin.headers).status_code == 204
    assert_envelope(client.get("/api/auth/session", headers=manager.headers), 401, "unauthenticated")
    signed_in = client.post("/api/auth/sign-in", json={"email": manager.user.email, "password": PASSWORD})
    wrong_password = client.post("/api/auth/sign-in", json={"email": admin.user.email, "password": PASSWORD + "!"})
    assert_envelope(signed_in, 401, "invalid_credentials")
    assert signed_in.json() == wrong_password.json()
    listed = client.get("/api/organization/members", headers=admin.headers).json()["data"]
    assert manager.user.id not in [u["id"] for u in listed]
    kept = client.get(f"/api/volunteer/{opportunity.id}", headers=admin.headers).json()["data"]
    assert kept["createdBy"] == manager.user.id
    assert_envelope(
        client.delete(f"/api/organization/members/{manager.user.id}", headers=admin.headers), 404, "not_found"
    )
    assert_envelope(
        client.patch(f"/api/organization/members/{manager.user.id}", json={"role": "member"}, headers=admin.headers),
        404,
        "not_found",
    )


def test_other_organizations_people_answer_404_like_unknown_ones(client, make):
    admin = make.admin()
    other_admin = make.admin()
    stranger = make.member(other_admin)
    for user_id in (stranger.user.id, other_admin.user.id, make.consultant().user.id, str(uuid.uuid4())):
        path = f"/api/organization/members/{user_id}"
        assert_envelope(client.patch(path, json={"role": "manager"}, headers=admin.headers), 404, "not_found")
        assert_envelope(client.delete(path, headers=admin.headers), 404, "not_found")
    assert client.get("/api/auth/session", headers=stranger.headers).json()["data"]["user"]["role"] == "member"


@pytest.mark.parametrize(
    "body",
    [{}, {"role": "owner"}, {"role": None}, {"role": "manager", "extra": 1}, {"role": 3}, ["manager"], "manager"],
    ids=["empty", "unknown role", "null", "extra field", "number", "array", "string"],
)
def test_malformed_role_changes_are_400(client, make, body):
    admin = make.admin()
    member = make.member(admin)
    response = client.patch(f"/api/organization/members/{member.user.id}", json=body, headers=admin.headers)
    assert_envelope(response, 400, "validation_error")


def test_malformed_user_ids_are_400(client, make):
    admin = make.admin()
    for user_id in ("not%20an%20id", "x" * 37, "a.b"):
        path = f"/api/organization/members/{user_id}"
        assert client.patch(path, json={"role": "member"}, headers=admin.headers).status_code == 400
        assert client.delete(path, headers=admin.headers).status_code == 400


@pytest.mark.live
def test_two_admins_demoting_each_other_at_once_leave_one(runtime, settings):
    """Run outside the test transaction: each demotion commits in a session of its own."""
    with Session(runtime.engine) as setup:
        make = factories.Factories(setup, runtime.cache)
        first = make.admin(f"Race {uuid.uuid4().hex[:8]}", email=f"race-{uuid.uuid4().hex}@example.test")
        second = make.member(first, email=f"race-{uuid.uuid4().hex}@example.test")
        second.user.role = second.user.hand_role = "admin"
        setup.commit()
        organization_id, ids = first.organization_id, [first.user.id, second.user.id]
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def demote(user_id: str) -> None:
        with Session(runtime.engine) as db:
            barrier.wait()
            try:
                members.update_member(
                    db, organization_id=organization_id, user_id=user_id, actor_id=user_id, changes={"role": "member"}
                )
                db.commit()
                outcomes.append("changed")
            except Conflict as error:
                outcomes.append(error.code)
            except OperationalError:  # SQLite: the second writer finds the database locked
                outcomes.append("locked")

    try:
        threads = [threading.Thread(target=demote, args=(user_id,)) for user_id in ids]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        with Session(runtime.engine) as check:
            roles = sorted(check.scalars(select(User.role).where(User.organization_id == organization_id)))
        assert roles == ["admin", "member"]
        # PostgreSQL serialises the two on the organization's row; SQLite may refuse the later writer.
        allowed = {("changed", "last_admin")} | ({("changed", "locked")} if settings.embedded else set())
        assert tuple(sorted(outcomes)) in allowed
    finally:
        with Session(runtime.engine) as cleanup:
            forget(cleanup, organization_id)
