"""Single sign-on set up at the test OpenID provider, with its domains verified through the test DNS server."""

from __future__ import annotations

import uuid

from tests.servers.openid_provider import CLIENT_ID, CLIENT_SECRET


def domain() -> str:
    return f"d{uuid.uuid4().hex[:10]}.test"


def configure(client, admin, provider, *, domains: list[str], **fields):
    body = {
        "issuer": provider.url,
        "clientId": CLIENT_ID,
        "clientSecret": CLIENT_SECRET,
        "emailDomains": domains,
        **fields,
    }
    return client.put("/api/organization/sso", json=body, headers=admin.headers)


def claim_of(client, admin, name: str) -> dict:
    """The organization's claim of the domain `name`, as GET /api/organization/sso shows it."""
    response = client.get("/api/organization/sso", headers=admin.headers)
    assert response.status_code == 200, response.text
    return next(claim for claim in response.json()["data"]["emailDomains"] if claim["domain"] == name)


def publish(dns, claim: dict) -> None:
    """Publish the claim's record, as the domain's owner would."""
    dns.publish(claim["record"]["name"], claim["record"]["value"])


def verify(client, admin, name: str):
    return client.post(f"/api/organization/sso/domains/{name}/verify", headers=admin.headers)


def prove(client, admin, dns, name: str) -> dict:
    """Publish the organization's record for `name` and verify it: the verified claim."""
    publish(dns, claim_of(client, admin, name))
    response = verify(client, admin, name)
    assert response.status_code == 200, response.text
    return response.json()["data"]
