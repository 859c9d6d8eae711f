"""Who may call each operation is stated in openapi.yaml (`x-roles`) and enforced in one step."""

from __future__ import annotations

import re

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
    assert (
        assert_envelope(response, 403, "forbidden")["error"]
        == "This endpoint is for organization administrators and auditors"
    )


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


# What the auditor grant reads: the evidence log, its checkpoints, proofs and receipts, the
# compliance reports and the exports (two POSTs that write nothing of the organization's).
AUDITOR_READS = {
    "list_events",
    "verify_chain",
    "list_checkpoints",
    "inclusion_proof",
    "consistency_proof",
    "get_receipt",
    "export_bundle",
    "get_report",
    "export_report",
}


def test_the_auditor_grant_is_named_where_it_reads_and_nowhere_else():
    named = {operation["operationId"] for _, _, operation in DECLARED if "auditor" in operation["x-roles"]}
    assert named == AUDITOR_READS
    for method, path, operation in DECLARED:
        if "auditor" in operation["x-roles"]:
            assert method == "get" or path.endswith("/export"), f"{method.upper()} {path}"


def _grant(client, admin, person, auditor: bool) -> dict:
    response = client.patch(
        f"/api/organization/members/{person.user.id}", json={"auditor": auditor}, headers=admin.headers
    )
    assert response.status_code == 200, response.text
    return response.json()["data"]


def test_an_auditor_member_reads_evidence_reports_and_exports_beside_their_role(client, make):
    admin = make.admin()
    auditor, colleague = make.member(admin), make.member(admin)
    act = make.activity.act(admin)
    reads = [
        ("GET", "/api/evidence", None),
        ("GET", "/api/evidence/verify", None),
        ("GET", "/api/evidence/checkpoints", None),
        ("GET", "/api/evidence/proofs/inclusion?seq=1", None),
        ("GET", "/api/evidence/proofs/consistency?from=1", None),
        ("GET", f"/api/evidence/receipts/act/{act.id}", None),
        ("POST", "/api/evidence/export", {}),
        ("GET", "/api/compliance/gri", None),
        ("POST", "/api/compliance/export", {"framework": "gri", "format": "json"}),
    ]

    def answers(person) -> list[int]:
        return [
            client.request(method, path, json=body, headers=person.headers).status_code for method, path, body in reads
        ]

    refused = [403] * 5 + [404, 403, 403, 403]  # the receipt of another's act: 404, as if there were none
    assert answers(auditor) == refused
    granted = _grant(client, admin, auditor, True)
    assert (granted["role"], granted["auditor"]) == ("member", True)
    people = client.get("/api/organization/members?limit=100", headers=admin.headers).json()["data"]
    assert {person["id"]: person["auditor"] for person in people} == {
        admin.user.id: False,
        auditor.user.id: True,
        colleague.user.id: False,
    }
    assert answers(auditor) == [200] * len(reads)  # at the very next request
    assert answers(colleague) == refused
    # The grant adds reading evidence, nothing else an admin or manager reads.
    assert client.get("/api/organization/members", headers=auditor.headers).status_code == 403
    _grant(client, admin, auditor, False)
    assert answers(auditor) == refused
    events = client.get(
        f"/api/evidence?subjectId={auditor.user.id}&type=member.auditor_set", headers=admin.headers
    ).json()["data"]
    assert [(event["data"], event["actorId"]) for event in events] == [
        ({"auditor": True, "source": "hand"}, admin.user.id),
        ({"auditor": False, "source": "hand"}, admin.user.id),
    ]


def _filled(path: str) -> str:
    """The path with an id in each parameter: the authorization step refuses before any lookup."""
    return re.sub(r"\{[^}]+\}", "0b8f3c1e-0000-4000-8000-000000000000", path)


def test_an_auditor_member_cannot_write_what_their_role_may_not(client, make):
    admin = make.admin()
    auditor = make.member(admin)
    _grant(client, admin, auditor, True)
    writes = [
        (method, path)
        for method, path, operation in DECLARED
        if method != "get"
        and operation["operationId"] not in AUDITOR_READS
        and not {"member", "anyone", "scim"} & set(operation["x-roles"])
    ]
    assert len(writes) > 20
    for method, path in writes:
        response = client.request(method.upper(), _filled(path), json={}, headers=auditor.headers)
        assert response.status_code == 403, f"{method.upper()} {path}: {response.status_code}"


def test_a_consultant_never_holds_the_grant(client, make):
    consultant = make.consultant()
    assert client.get("/api/evidence/verify", headers=consultant.headers).status_code == 403
    stranger = make.member(make.admin())
    response = client.patch(
        f"/api/organization/members/{stranger.user.id}", json={"auditor": True}, headers=make.admin().headers
    )
    assert_envelope(response, 404, "not_found")
