"""Who may call each operation is stated in openapi.yaml (`x-roles`) and enforced in one step."""

from __future__ import annotations

import pytest

from kindling.web.app import load_spec
from kindling.web.operations import HTTP_METHODS, ROLES
from tests.helpers import assert_envelope

SPEC = load_spec()
DECLARED = [
    (method, path, operation)
    for path, item in SPEC["paths"].items()
    for method, operation in item.items()
    if method in HTTP_METHODS
]


@pytest.mark.parametrize(("method", "path", "operation"), DECLARED, ids=[f"{m} {p}" for m, p, _ in DECLARED])
def test_every_operation_states_its_audience(method, path, operation):
    roles = operation.get("x-roles")
    assert roles, f"{method.upper()} {path} states no x-roles"
    assert set(roles) <= ROLES
    public = operation.get("security", SPEC["security"]) == []
    # `anyone` and no security requirement go together, and `anyone` stands alone.
    assert public == ("anyone" in roles)
    assert roles == ["anyone"] or "anyone" not in roles


def test_the_operation_is_the_one_connexion_routed_to(client, make):
    admin = make.admin()
    # /api/kindness/stats also matches /api/kindness/{id}: the routed operation decides, so a
    # member reads the statistics and is refused no act's page for want of a role.
    member = make.member(admin)
    assert client.get("/api/kindness/stats", headers=member.headers).status_code == 200
    assert_envelope(client.get("/api/nowhere", headers=member.headers), 404, "not_found")


def test_a_member_is_refused_an_admin_operation_before_validation(client, make):
    member = make.member(make.admin())
    # The body is invalid too: the caller's role is refused first, so nothing about the body leaks.
    response = client.post("/api/compliance/export", json={"framework": "nope"}, headers=member.headers)
    assert assert_envelope(response, 403, "forbidden")["error"] == "This endpoint is for organization administrators"


def test_a_consultant_is_refused_a_members_operation(client, make):
    response = client.get("/api/kindness", headers=make.consultant().headers)
    assert_envelope(response, 403, "forbidden")


def test_a_member_is_refused_a_consultants_operation(client, make):
    response = client.get("/api/clients", headers=make.member(make.admin()).headers)
    assert_envelope(response, 403, "forbidden")


def test_a_manager_may_call_an_organisers_operation_and_a_member_may_not(client, make):
    admin = make.admin()
    manager = make.manager(admin)
    member = make.member(admin)
    assert client.get("/api/organization/members", headers=manager.headers).status_code == 200
    assert_envelope(client.get("/api/organization/members", headers=member.headers), 403, "forbidden")


def test_without_a_session_the_answer_is_401_not_403(client):
    assert_envelope(client.get("/api/compliance/gri"), 401, "unauthenticated")
