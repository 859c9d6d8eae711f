"""Who may call each operation of the spec, and a request to it that validation lets through."""

from __future__ import annotations

import dataclasses
import uuid

from tests.helpers import spec

ANYONE = frozenset({"anonymous", "member", "manager", "admin", "consultant"})
SIGNED_IN = frozenset({"member", "manager", "admin", "consultant"})
MEMBERS = frozenset({"member", "manager", "admin"})
ORGANISERS = frozenset({"manager", "admin"})
ADMIN = frozenset({"admin"})
CONSULTANT = frozenset({"consultant"})

ACT = {"description": "Covered a shift", "category": "community", "verificationLevel": 1, "recipientId": "someone"}
INVITATION = {"invitationId": "6f1c3ac5-3c55-4a3a-9d3e-6a0f3f4b2c11"}
WITNESS = {
    "name": "Auditor's witness",
    "url": "https://witness.example.test",
    "verifierKey": "witness.example.test/w1+00000000+BAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
}
CSV = ("clients.csv", b"organizationId,message\n6f1c3ac5-3c55-4a3a-9d3e-6a0f3f4b2c11,\n", "text/csv")


@dataclasses.dataclass(frozen=True)
class Access:
    callers: frozenset[str]
    json: dict | None = None
    files: dict | None = None


def theme_example() -> dict:
    return spec.resolve(spec.document()["components"]["schemas"]["ThemeCheckRequest"])["example"]


ACCESS = {
    ("POST", "/api/auth/tokens"): Access(SIGNED_IN, {"name": "CI", "expiresInDays": 30}),
    ("GET", "/api/auth/tokens"): Access(SIGNED_IN),
    ("DELETE", "/api/auth/tokens/{id}"): Access(SIGNED_IN),
    # Single sign-on begins without a session; its callback is proven by the single-use state.
    ("GET", "/api/auth/sso/start"): Access(ANYONE),
    ("GET", "/api/auth/sso/callback"): Access(ANYONE),
    ("GET", "/api/auth/saml/{organizationSlug}/metadata"): Access(ANYONE),
    ("POST", "/api/auth/saml/acs"): Access(ANYONE, {"SAMLResponse": "PHg+", "RelayState": "x"}),
    ("PUT", "/api/organization/sso"): Access(
        ADMIN,
        {
            "issuer": "https://idp.example.test",
            "clientId": "kindling",
            "clientSecret": "s" * 20,
            "emailDomains": ["example.test"],
            "jitProvisioning": False,
            "enforced": False,
        },
    ),
    ("GET", "/api/organization/sso"): Access(ADMIN),
    ("DELETE", "/api/organization/sso"): Access(ADMIN),
    ("POST", "/api/organization/sso/domains/{domain}/verify"): Access(ADMIN),
    ("POST", "/api/organization/scim-tokens"): Access(ADMIN, {"description": "Okta"}),
    ("GET", "/api/organization/scim-tokens"): Access(ADMIN),
    ("DELETE", "/api/organization/scim-tokens/{tokenId}"): Access(ADMIN),
    ("GET", "/api/organization/groups"): Access(ORGANISERS),
    ("PATCH", "/api/organization/groups/{groupId}"): Access(ADMIN, {"role": "manager"}),
    ("POST", "/api/volunteer/{id}/check-out"): Access(MEMBERS),
    ("GET", "/api/organization"): Access(MEMBERS),
    ("PATCH", "/api/organization"): Access(ADMIN, {"reportingCurrency": "EUR", "locale": "fr-FR"}),
    ("GET", "/api/rates"): Access(SIGNED_IN),
    ("GET", "/api/evidence/witnesses"): Access(ADMIN),
    ("POST", "/api/evidence/witnesses"): Access(ADMIN, WITNESS),
    ("DELETE", "/api/evidence/witnesses/{witnessId}"): Access(ADMIN),
    ("PUT", "/api/evidence/witness-policy"): Access(ADMIN, {"quorum": 1}),
    ("GET", "/api/clients/{organizationId}/witnesses"): Access(CONSULTANT),
    ("POST", "/api/clients/{organizationId}/witnesses"): Access(CONSULTANT, WITNESS),
    ("GET", "/api/evidence/checkpoints"): Access(ADMIN),
    ("GET", "/api/evidence/proofs/inclusion"): Access(ADMIN),
    ("GET", "/api/evidence/proofs/consistency"): Access(ADMIN),
    ("POST", "/api/giving/programs"): Access(
        ADMIN,
        {
            "name": "Gift match",
            "kind": "donation_match",
            "active": True,
            "periodStartMonth": 1,
            "perPersonCap": 100000,
            "approval": "auto",
            "ratioPercent": 100,
            "minimumGift": 100,
        },
    ),
    ("GET", "/api/giving/programs"): Access(MEMBERS),
    ("GET", "/api/giving/programs/{id}"): Access(MEMBERS),
    ("PATCH", "/api/giving/programs/{id}"): Access(ADMIN, {"active": False}),
    ("POST", "/api/giving/grants"): Access(
        MEMBERS, {"programId": "6f1c3ac5-3c55-4a3a-9d3e-6a0f3f4b2c11", "recipient": {"name": "Food Bank"}, "hours": 1}
    ),
    ("GET", "/api/giving/requests"): Access(MEMBERS),
    ("GET", "/api/giving/requests/{id}"): Access(MEMBERS),
    ("POST", "/api/giving/requests/{id}/decision"): Access(ORGANISERS, {"decision": "approve"}),
    ("POST", "/api/giving/requests/{id}/payout"): Access(ADMIN, {"reference": "PAY-1"}),
    ("GET", "/api/giving/summary"): Access(ADMIN),
    ("POST", "/api/auth/sign-up"): Access(ANYONE),
    ("POST", "/api/auth/sign-in"): Access(ANYONE),
    ("POST", "/api/auth/sign-out"): Access(SIGNED_IN),
    ("GET", "/api/auth/session"): Access(SIGNED_IN),
    ("GET", "/api/health"): Access(ANYONE),
    ("POST", "/api/kindness"): Access(MEMBERS, ACT),
    ("GET", "/api/kindness"): Access(MEMBERS),
    ("GET", "/api/kindness/stats"): Access(MEMBERS),
    ("GET", "/api/kindness/{id}"): Access(MEMBERS),
    ("PUT", "/api/kindness/{id}"): Access(MEMBERS, {"description": "Changed"}),
    ("POST", "/api/kindness/{id}/verifications"): Access(MEMBERS, {"level": 3, "decision": "approve"}),
    ("GET", "/api/kindness/{id}/verifications"): Access(MEMBERS),
    ("GET", "/api/verifications/pending"): Access(MEMBERS),
    ("POST", "/api/kindness/{id}/attestations"): Access(
        MEMBERS,
        {"level": 5, "attesterName": "Ada", "attesterOrganization": "Food Bank", "attesterEmail": "ada@bank.test"},
    ),
    # An attester has no account: the token is the credential, and a wrong one is a 404.
    ("POST", "/api/attestations/lookup"): Access(ANYONE, {"token": "A" * 43}),
    ("POST", "/api/attestations/answer"): Access(ANYONE, {"token": "A" * 43, "decision": "confirm", "name": "Ada"}),
    ("GET", "/attest"): Access(ANYONE),
    ("GET", "/api/volunteer"): Access(MEMBERS),
    ("POST", "/api/volunteer"): Access(
        ORGANISERS,
        {
            "title": "Beach clean-up",
            "startsAt": "2030-06-01T09:00:00Z",
            "endsAt": "2030-06-01T12:00:00Z",
            "location": {"latitude": 51.5, "longitude": -0.12},
        },
    ),
    ("GET", "/api/volunteer/{id}"): Access(MEMBERS),
    ("POST", "/api/volunteer/{id}/check-in"): Access(MEMBERS, {"latitude": 51.5, "longitude": -0.12}),
    ("GET", "/api/volunteer/{id}/check-in-code"): Access(ORGANISERS),
    ("GET", "/api/volunteer/{id}/check-ins"): Access(ORGANISERS),
    ("POST", "/api/volunteer/{id}/check-ins/{checkInId}/approve"): Access(ORGANISERS, {"note": "Seen at the door"}),
    ("POST", "/api/organization/join-code"): Access(ADMIN, {"rotate": True}),
    ("GET", "/api/organization/members"): Access(ORGANISERS),
    ("PATCH", "/api/organization/members/{userId}"): Access(ADMIN, {"role": "manager"}),
    ("DELETE", "/api/organization/members/{userId}"): Access(ADMIN),
    ("GET", "/api/me/export"): Access(SIGNED_IN),
    ("GET", "/api/organization/members/{userId}/export"): Access(ADMIN),
    ("POST", "/api/organization/members/{userId}/erase"): Access(ADMIN),
    ("GET", "/api/donations"): Access(MEMBERS),
    ("POST", "/api/donations"): Access(MEMBERS, {"amount": 500, "currency": "USD", "recipient": {"name": "Shelter"}}),
    ("GET", "/api/donations/{id}"): Access(MEMBERS),
    ("GET", "/api/wellbeing"): Access(MEMBERS),
    ("POST", "/api/wellbeing"): Access(MEMBERS, {"mood": 4, "stress": 2}),
    ("GET", "/api/wellbeing/{id}"): Access(MEMBERS),
    ("POST", "/webhooks/payments"): Access(ANYONE),
    ("POST", "/webhooks/auth"): Access(ANYONE),
    ("GET", "/api/integrations/slack"): Access(ADMIN),
    ("DELETE", "/api/integrations/slack"): Access(ADMIN),
    ("GET", "/api/integrations/slack/install"): Access(ADMIN),
    ("GET", "/api/integrations/slack/callback"): Access(ANYONE),
    ("POST", "/integrations/slack/commands"): Access(ANYONE),
    ("POST", "/integrations/slack/interactions"): Access(ANYONE),
    ("POST", "/integrations/slack/events"): Access(ANYONE),
    ("GET", "/api/organizations/search"): Access(CONSULTANT),
    ("GET", "/api/invitations"): Access(frozenset({"admin", "consultant"})),
    ("POST", "/api/invitations/send"): Access(CONSULTANT, {"organizationId": INVITATION["invitationId"]}),
    ("POST", "/api/invitations/accept"): Access(ADMIN, INVITATION),
    ("POST", "/api/invitations/decline"): Access(ADMIN, INVITATION),
    ("POST", "/api/invitations/cancel"): Access(CONSULTANT, INVITATION),
    ("GET", "/api/clients"): Access(CONSULTANT),
    ("DELETE", "/api/clients/{organizationId}"): Access(CONSULTANT),
    ("GET", "/api/consultants"): Access(ADMIN),
    ("DELETE", "/api/consultants/{consultantId}"): Access(ADMIN),
    ("POST", "/api/theme/generate"): Access(CONSULTANT, {"primaryColor": "#336699"}),
    ("POST", "/api/theme/derive"): Access(CONSULTANT, {"primaryColor": "#336699"}),
    ("POST", "/api/theme/check"): Access(CONSULTANT, None),  # the spec's own example, read when called
    ("POST", "/api/bulk/invite"): Access(CONSULTANT, files={"file": CSV}),
    ("GET", "/api/bulk/export"): Access(CONSULTANT),
    # A theme is read by the organization's members and its consultants; for anyone else the
    # organization does not exist (404), which is past authorization.
    ("POST", "/api/theme/save"): Access(CONSULTANT, None),  # the spec's example theme, read when called
    ("GET", "/api/theme/{organizationId}"): Access(SIGNED_IN),
    ("GET", "/api/theme/{organizationId}/css"): Access(SIGNED_IN),
    ("GET", "/api/theme/{organizationId}/preview"): Access(SIGNED_IN),
    ("GET", "/api/compliance/{framework}"): Access(ADMIN),
    ("POST", "/api/compliance/export"): Access(ADMIN, {"framework": "gri", "format": "json"}),
    ("POST", "/api/webhooks/endpoints"): Access(
        CONSULTANT, {"url": "https://hooks.example.test/k", "events": ["client.invited"]}
    ),
    ("GET", "/api/webhooks/endpoints"): Access(CONSULTANT),
    ("GET", "/api/webhooks/endpoints/{endpointId}"): Access(CONSULTANT),
    ("PATCH", "/api/webhooks/endpoints/{endpointId}"): Access(CONSULTANT, {"description": "Changed"}),
    ("DELETE", "/api/webhooks/endpoints/{endpointId}"): Access(CONSULTANT),
    ("POST", "/api/webhooks/endpoints/{endpointId}/rotate-secret"): Access(CONSULTANT),
    ("GET", "/api/webhooks/endpoints/{endpointId}/deliveries"): Access(CONSULTANT),
    # The evidence log is its organization's admins' (and members' with the auditor grant); the
    # keys that check its signatures are public, so an auditor without an account can verify a
    # bundle or an export. A receipt is its record's owner's too (another's answers 404).
    ("GET", "/api/evidence/receipts/{kind}/{id}"): Access(MEMBERS),
    ("GET", "/api/evidence"): Access(ADMIN),
    ("GET", "/api/evidence/verify"): Access(ADMIN),
    ("GET", "/api/evidence/keys"): Access(ANYONE),
    ("POST", "/api/evidence/export"): Access(ADMIN, {}),  # {}: the whole log
}
QUERIES = {
    "/api/organizations/search": "?q=Organization",
    "/api/bulk/export": "?format=json",
    "/api/integrations/slack/callback": "?state=made-up&code=made-up",
}


def url_for(path: str) -> str:
    """`path` with a made-up id for each parameter, and the query it needs."""
    path = path.replace("{framework}", "gri")
    path = path.replace("{kind}", "act")
    path = path.replace("{domain}", "example.test")
    for parameter in (
        "{id}",
        "{organizationId}",
        "{consultantId}",
        "{endpointId}",
        "{userId}",
        "{checkInId}",
        "{token}",
    ):
        path = path.replace(parameter, str(uuid.uuid4()))
    return path + QUERIES.get(path, "")


def request_kwargs(key: tuple[str, str]) -> dict:
    access = ACCESS[key]
    if key == ("POST", "/api/theme/check"):
        return {"json": theme_example()}
    if key == ("POST", "/api/theme/save"):
        return {"json": {"organizationId": str(uuid.uuid4()), **theme_example()}}
    if access.files is not None:
        return {"files": access.files}
    return {"json": access.json} if access.json is not None else {}
