"""API1 Broken Object Level Authorization: another tenant's ids answer exactly like ids that
do not exist (404), change nothing, and never show up in lists."""

from __future__ import annotations

import dataclasses
import uuid

import pytest

from kindling.themes import generate_theme
from tests.factories.volunteering import CENTRE
from tests.helpers import assert_envelope, spec
from tests.owasp.conftest import WITNESS_KEY


@dataclasses.dataclass(frozen=True)
class Case:
    """Tenant B's `caller` names tenant A's `target` in `url` or `body` ("{id}" stands for it,
    "{own_opportunity_id}" for B's own opportunity); `view` is how A's `owner` reads the record
    ("{opportunity_id}" is A's opportunity), which must read the same before and after;
    `status` is the answer to both a foreign and a missing id."""

    method: str
    url: str
    caller: str
    target: str
    view: tuple[str, str]
    body: dict | None = None
    status: tuple[int, str] = (404, "not_found")

    def request(self, client, tenants, record_id: str):
        caller = getattr(tenants[1], self.caller)
        body = (
            None
            if self.body is None
            else {
                key: value.format(id=record_id) if isinstance(value, str) else value for key, value in self.body.items()
            }
        )
        url = self.url.format(id=record_id, own_opportunity_id=tenants[1].opportunity_id)
        return client.request(self.method, url, json=body, headers=caller.headers)

    def snapshot(self, client, tenants) -> dict:
        owner, url = self.view
        a = tenants[0]
        response = client.get(
            url.format(id=getattr(a, self.target), opportunity_id=a.opportunity_id), headers=getattr(a, owner).headers
        )
        assert response.status_code == 200, response.text
        return response.json()


AT_CENTRE = {"latitude": CENTRE[0], "longitude": CENTRE[1]}
INVITATION = {"invitationId": "{id}"}
THEME = ("member", "/api/theme/{id}")
ENDPOINT = ("consultant", "/api/webhooks/endpoints/{id}")
PROGRAM = ("admin", "/api/giving/programs/{id}")
GIVING_REQUEST = ("admin", "/api/giving/requests/{id}")
CASES = {
    ("GET", "/api/kindness/{id}"): Case(
        "GET", "/api/kindness/{id}", "member", "act_id", ("member", "/api/kindness/{id}")
    ),
    ("PUT", "/api/kindness/{id}"): Case(
        "PUT", "/api/kindness/{id}", "admin", "act_id", ("member", "/api/kindness/{id}"), {"verificationLevel": 5}
    ),
    ("POST", "/api/kindness/{id}/verifications"): Case(
        "POST",
        "/api/kindness/{id}/verifications",
        "admin",
        "act_id",
        ("member", "/api/kindness/{id}"),
        {"level": 2, "decision": "confirm"},
    ),
    ("GET", "/api/kindness/{id}/verifications"): Case(
        "GET", "/api/kindness/{id}/verifications", "member", "act_id", ("member", "/api/kindness/{id}/verifications")
    ),
    ("POST", "/api/kindness/{id}/attestations"): Case(
        "POST",
        "/api/kindness/{id}/attestations",
        "admin",
        "act_id",
        ("member", "/api/kindness/{id}"),
        {"level": 5, "attesterName": "Ada", "attesterOrganization": "Food Bank", "attesterEmail": "ada@bank.test"},
    ),
    ("GET", "/api/volunteer/{id}"): Case(
        "GET", "/api/volunteer/{id}", "member", "opportunity_id", ("admin", "/api/volunteer/{id}")
    ),
    ("POST", "/api/volunteer/{id}/check-out"): Case(
        "POST", "/api/volunteer/{id}/check-out", "member", "opportunity_id", ("admin", "/api/volunteer/{id}")
    ),
    ("POST", "/api/volunteer/{id}/check-in"): Case(
        "POST", "/api/volunteer/{id}/check-in", "member", "opportunity_id", ("admin", "/api/volunteer/{id}"), AT_CENTRE
    ),
    ("GET", "/api/volunteer/{id}/check-in-code"): Case(
        "GET", "/api/volunteer/{id}/check-in-code", "admin", "opportunity_id", ("admin", "/api/volunteer/{id}")
    ),
    ("GET", "/api/volunteer/{id}/check-ins"): Case(
        "GET", "/api/volunteer/{id}/check-ins", "admin", "opportunity_id", ("admin", "/api/volunteer/{id}/check-ins")
    ),
    # A's check-in approved through B's own opportunity (A's opportunity: test_check_in_codes).
    ("POST", "/api/volunteer/{id}/check-ins/{checkInId}/approve"): Case(
        "POST",
        "/api/volunteer/{own_opportunity_id}/check-ins/{id}/approve",
        "admin",
        "check_in_id",
        ("admin", "/api/volunteer/{opportunity_id}/check-ins"),
        {"note": "Seen at the door"},
    ),
    ("PATCH", "/api/organization/members/{userId}"): Case(
        "PATCH",
        "/api/organization/members/{id}",
        "admin",
        "member_id",
        ("admin", "/api/organization/members"),
        {"role": "admin"},
    ),
    ("DELETE", "/api/organization/members/{userId}"): Case(
        "DELETE", "/api/organization/members/{id}", "admin", "member_id", ("admin", "/api/organization/members")
    ),
    ("GET", "/api/organization/members/{userId}/export"): Case(
        "GET", "/api/organization/members/{id}/export", "admin", "member_id", ("admin", "/api/organization/members")
    ),
    ("POST", "/api/organization/members/{userId}/erase"): Case(
        "POST", "/api/organization/members/{id}/erase", "admin", "member_id", ("admin", "/api/organization/members")
    ),
    ("GET", "/api/evidence/receipts/{kind}/{id}"): Case(
        "GET", "/api/evidence/receipts/act/{id}", "admin", "act_id", ("member", "/api/kindness/{id}")
    ),
    ("GET", "/api/donations/{id}"): Case(
        "GET", "/api/donations/{id}", "admin", "donation_id", ("member", "/api/donations/{id}")
    ),
    ("GET", "/api/wellbeing/{id}"): Case(
        "GET", "/api/wellbeing/{id}", "admin", "wellbeing_id", ("member", "/api/wellbeing/{id}")
    ),
    ("POST", "/api/invitations/accept"): Case(
        "POST", "/api/invitations/accept", "admin", "invitation_id", ("admin", "/api/invitations"), INVITATION
    ),
    ("POST", "/api/invitations/decline"): Case(
        "POST", "/api/invitations/decline", "admin", "invitation_id", ("admin", "/api/invitations"), INVITATION
    ),
    ("POST", "/api/invitations/cancel"): Case(
        "POST", "/api/invitations/cancel", "consultant", "invitation_id", ("suitor", "/api/invitations"), INVITATION
    ),
    ("DELETE", "/api/clients/{organizationId}"): Case(
        "DELETE", "/api/clients/{id}", "consultant", "organization_id", ("consultant", "/api/clients")
    ),
    ("DELETE", "/api/evidence/witnesses/{witnessId}"): Case(
        "DELETE", "/api/evidence/witnesses/{id}", "admin", "witness_id", ("admin", "/api/evidence/witnesses")
    ),
    # A consultant lists and adds witnesses only for its own clients.
    ("GET", "/api/clients/{organizationId}/witnesses"): Case(
        "GET", "/api/clients/{id}/witnesses", "consultant", "organization_id", ("admin", "/api/evidence/witnesses")
    ),
    ("POST", "/api/clients/{organizationId}/witnesses"): Case(
        "POST",
        "/api/clients/{id}/witnesses",
        "consultant",
        "organization_id",
        ("admin", "/api/evidence/witnesses"),
        {"name": "Consultant's witness", "url": "https://witness.example.test", "verifierKey": WITNESS_KEY},
    ),
    ("DELETE", "/api/consultants/{consultantId}"): Case(
        "DELETE", "/api/consultants/{id}", "admin", "consultant_id", ("admin", "/api/consultants")
    ),
    ("GET", "/api/theme/{organizationId}"): Case("GET", "/api/theme/{id}", "member", "organization_id", THEME),
    ("GET", "/api/theme/{organizationId}/css"): Case(
        "GET", "/api/theme/{id}/css", "consultant", "organization_id", THEME
    ),
    ("GET", "/api/theme/{organizationId}/preview"): Case(
        "GET", "/api/theme/{id}/preview", "admin", "organization_id", THEME
    ),
    # Saving is for an organization's consultants: anyone else's organization is refused alike.
    ("POST", "/api/theme/save"): Case(
        "POST",
        "/api/theme/save",
        "consultant",
        "organization_id",
        THEME,
        {"organizationId": "{id}", "theme": generate_theme("#cc3366")},
        (403, "forbidden"),
    ),
    ("GET", "/api/webhooks/endpoints/{endpointId}"): Case(
        "GET", "/api/webhooks/endpoints/{id}", "consultant", "endpoint_id", ENDPOINT
    ),
    ("PATCH", "/api/webhooks/endpoints/{endpointId}"): Case(
        "PATCH", "/api/webhooks/endpoints/{id}", "consultant", "endpoint_id", ENDPOINT, {"enabled": False}
    ),
    ("DELETE", "/api/webhooks/endpoints/{endpointId}"): Case(
        "DELETE", "/api/webhooks/endpoints/{id}", "consultant", "endpoint_id", ENDPOINT
    ),
    ("POST", "/api/webhooks/endpoints/{endpointId}/rotate-secret"): Case(
        "POST", "/api/webhooks/endpoints/{id}/rotate-secret", "consultant", "endpoint_id", ENDPOINT
    ),
    ("GET", "/api/webhooks/endpoints/{endpointId}/deliveries"): Case(
        "GET", "/api/webhooks/endpoints/{id}/deliveries", "consultant", "endpoint_id", ENDPOINT
    ),
    ("GET", "/api/giving/programs/{id}"): Case("GET", "/api/giving/programs/{id}", "member", "program_id", PROGRAM),
    ("PATCH", "/api/giving/programs/{id}"): Case(
        "PATCH", "/api/giving/programs/{id}", "admin", "program_id", PROGRAM, {"active": False}
    ),
    ("POST", "/api/giving/grants"): Case(
        "POST",
        "/api/giving/grants",
        "member",
        "program_id",
        PROGRAM,
        {"programId": "{id}", "recipient": {"name": "Food Bank"}, "hours": 1},
    ),
    ("GET", "/api/giving/requests/{id}"): Case(
        "GET", "/api/giving/requests/{id}", "admin", "giving_request_id", GIVING_REQUEST
    ),
    ("POST", "/api/giving/requests/{id}/decision"): Case(
        "POST",
        "/api/giving/requests/{id}/decision",
        "admin",
        "giving_request_id",
        GIVING_REQUEST,
        {"decision": "approve"},
    ),
    ("POST", "/api/giving/requests/{id}/payout"): Case(
        "POST", "/api/giving/requests/{id}/payout", "admin", "giving_request_id", GIVING_REQUEST, {"reference": "PAY-1"}
    ),
}

# Ids that name no tenant's record, so there is no other tenant's record to reach through them.
NOT_TENANT_RECORDS = {
    (
        "GET",
        "/api/auth/saml/{organizationSlug}/metadata",
    ): "service-provider metadata is public: identity providers read it",
    ("POST", "/api/kindness"): "recipientId is free text naming anyone, inside or outside the organization",
    ("POST", "/api/invitations/send"): "any consultant may invite any organization: that is the product",
    (
        "GET",
        "/api/kindness",
    ): "userId filters the caller's own organization's list: test_user_filter_of_another_tenant_finds_nothing",
    (
        "GET",
        "/api/compliance/{framework}",
    ): "a framework is public reference data; the report is always of the caller's organization",
    (
        "GET",
        "/api/evidence",
    ): "subjectId filters the caller's own organization's log: test_evidence_of_another_tenant_is_never_reachable",
    (
        "GET",
        "/api/giving/requests",
    ): "programId filters the caller's own organization's requests: test_lists_never_show_another_tenants_records",
    (
        "DELETE",
        "/api/auth/tokens/{id}",
    ): "a token of anyone else answers 404: tests/accounts/test_api_tokens.py::test_a_revoked_token_is_refused_and_only_its_owner_revokes_it",
    (
        "DELETE",
        "/api/organization/scim-tokens/{tokenId}",
    ): "another organization's token answers 404: tests/accounts/scim/test_tokens.py::test_only_admins_manage_tokens_and_only_their_own",
    (
        "PATCH",
        "/api/organization/groups/{groupId}",
    ): "another organization's group answers 404: tests/accounts/scim/test_groups_as_roles.py::test_admins_and_managers_list_groups_with_member_counts",
    (
        "PUT",
        "/api/organization/sso",
    ): "the settings are always the caller's organization's; a domain another organization verified is 409: tests/accounts/sso/test_oidc.py",
    (
        "POST",
        "/api/organization/sso/domains/{domain}/verify",
    ): "a domain is looked up among the caller's organization's own claims; another's answers 404: tests/accounts/sso/test_domains.py::test_only_admins_verify_and_only_domains_they_claim",
}


def test_every_id_bearing_operation_has_a_cross_tenant_case():
    bearing = {key for key, operation in spec.operations().items() if spec.id_fields(operation)}
    missing = bearing - set(CASES) - set(NOT_TENANT_RECORDS)
    assert not missing, f"add a cross-tenant case to CASES (or a reason to NOT_TENANT_RECORDS) for {sorted(missing)}"
    assert not (set(CASES) | set(NOT_TENANT_RECORDS)) - bearing, "a case names an operation the spec no longer has"


@pytest.mark.parametrize("key", sorted(CASES), ids=[f"{m} {p}" for m, p in sorted(CASES)])
def test_another_tenants_id_answers_like_a_missing_one(client, tenants, key):
    case = CASES[key]
    before = case.snapshot(client, tenants)
    foreign = case.request(client, tenants, getattr(tenants[0], case.target))
    missing = case.request(client, tenants, str(uuid.uuid4()))
    assert_envelope(foreign, *case.status)
    assert (foreign.status_code, foreign.json()) == (missing.status_code, missing.json())
    assert case.snapshot(client, tenants) == before


def test_lists_never_show_another_tenants_records(client, tenants):
    a, b = tenants
    secrets = a.ids()
    views = [
        (b.member, "/api/kindness"),
        (b.member, "/api/kindness/stats"),
        (b.member, "/api/volunteer"),
        (b.admin, "/api/donations"),
        (b.member, "/api/wellbeing"),
        (b.admin, "/api/invitations"),
        (b.admin, "/api/consultants"),
        (b.consultant, "/api/clients"),
        (b.consultant, "/api/invitations"),
        (b.admin, "/api/organization/members"),
        (b.admin, f"/api/volunteer/{b.opportunity_id}/check-ins"),
        (b.admin, "/api/auth/session"),
        (b.admin, "/api/evidence"),
        (b.admin, "/api/evidence/verify"),
        (b.admin, "/api/giving/programs"),
        (b.admin, "/api/giving/requests"),
        (b.admin, f"/api/giving/requests?programId={a.program_id}"),
    ]
    for caller, url in views:
        response = client.get(url, headers=caller.headers)
        assert response.status_code == 200, (url, response.text)
        leaked = {name for name, value in secrets.items() if value in response.text}
        assert not leaked, (url, leaked)
    assert client.get("/api/kindness/stats", headers=b.member.headers).json()["data"]["total"] == 1  # B's own act


def test_user_filter_of_another_tenant_finds_nothing(client, tenants):
    a, b = tenants
    response = client.get("/api/kindness", params={"userId": a.member.user.id}, headers=b.admin.headers)
    assert response.status_code == 200 and response.json() == {"data": [], "nextCursor": None}


def test_evidence_of_another_tenant_is_never_reachable(client, tenants):
    """An admin's own organization's log is the only one there is to reach: a subject of another
    tenant's filters to nothing, exactly like a missing one, and no request names an organization."""
    a, b = tenants
    subject = {"subjectId": a.act_id}
    own = client.get("/api/evidence", params=subject, headers=a.admin.headers)
    assert own.status_code == 200, own.text
    assert own.json()["data"] and {event["subject"]["id"] for event in own.json()["data"]} == {
        a.act_id
    }  # A's act is on A's log
    foreign = client.get("/api/evidence", params=subject, headers=b.admin.headers)
    missing = client.get("/api/evidence", params={"subjectId": str(uuid.uuid4())}, headers=b.admin.headers)
    assert foreign.status_code == 200 and foreign.json() == {"data": [], "nextCursor": None}
    assert (missing.status_code, missing.json()) == (foreign.status_code, foreign.json())

    # B's log, its verification and its export are B's alone (and not empty, so the check bites).
    log = client.get("/api/evidence", headers=b.admin.headers).json()["data"]
    assert log and {event["organizationId"] for event in log} == {b.organization_id}
    bundle = client.post("/api/evidence/export", json={}, headers=b.admin.headers)
    assert bundle.status_code == 200, bundle.text
    assert bundle.json()["organizationId"] == b.organization_id
    assert [event["seq"] for event in bundle.json()["events"]] == [event["seq"] for event in log]
    leaked = {name for name, value in a.ids().items() if value in bundle.text}
    assert not leaked, leaked
    verified = client.get("/api/evidence/verify", headers=b.admin.headers).json()
    assert verified["events"] == len(log) and verified["head"]["seq"] == log[-1]["seq"]

    # Naming A's organization is no way in: the operations take no organization at all.
    before = client.get("/api/evidence", headers=a.admin.headers).json()
    for response in (
        client.get("/api/evidence", params={"organizationId": a.organization_id}, headers=b.admin.headers),
        client.get("/api/evidence/verify", params={"organizationId": a.organization_id}, headers=b.admin.headers),
        client.post("/api/evidence/export", json={"organizationId": a.organization_id}, headers=b.admin.headers),
    ):
        assert_envelope(response, 400, "validation_error")
    assert client.get("/api/evidence", headers=a.admin.headers).json() == before


def test_colleagues_do_not_read_each_others_private_records(client, make, tenants):
    a, _ = tenants
    colleague = make.member(a.admin)
    assert_envelope(client.get(f"/api/wellbeing/{a.wellbeing_id}", headers=colleague.headers), 404, "not_found")
    assert_envelope(client.get(f"/api/donations/{a.donation_id}", headers=colleague.headers), 404, "not_found")
    # No admin ever sees another person's wellbeing answers, only aggregates.
    assert_envelope(client.get(f"/api/wellbeing/{a.wellbeing_id}", headers=a.admin.headers), 404, "not_found")
