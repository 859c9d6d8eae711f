"""Single sign-on's email domains are proven through DNS before they route anyone
(docs/decisions.md §2): a real DNS server on loopback (tests/servers/dns_server.py) serves the records."""

from __future__ import annotations

import time
import urllib.parse

from sqlalchemy import select

from kindling.accounts.models import User
from kindling.evidence.models import EvidenceEvent
from tests.helpers import assert_envelope
from tests.helpers.sso import claim_of, configure, domain, prove, publish, verify


def start(client, email: str):
    return client.get("/api/auth/sso/start?" + urllib.parse.urlencode({"email": email}), follow_redirects=False)


def jit_sign_in(client, provider, email: str):
    """A person new to Kindling signs in through the provider by their email: the callback's answer."""
    started = start(client, email)
    assert started.status_code == 302, started.text
    callback = provider.sign_in(started.headers["location"], provider.person(email=email))
    response = client.get(callback, follow_redirects=False)
    client.cookies.clear()
    return response


def test_a_claim_shows_its_record_and_is_verified_once_the_record_is_published(client, make, db, openid_provider, dns):
    admin, name = make.admin(), domain()
    assert configure(client, admin, openid_provider, domains=[name]).status_code == 200
    claim = claim_of(client, admin, name)
    expected = claim["record"]
    assert expected["name"] == f"_kindling-challenge.{name}" and expected["type"] == "TXT"
    missing = assert_envelope(verify(client, admin, name), 409, "domain_not_verified")
    assert missing["details"]["record"] == expected
    assert expected["name"] in missing["error"] and expected["value"] in missing["error"]
    dns.publish(expected["name"], "kindling-domain-verification=" + "0" * 32)  # another claim's, or a typo
    assert_envelope(verify(client, admin, name), 409, "domain_not_verified")
    dns.publish(expected["name"], "v=spf1 -all", expected["value"])  # among other records, as in real zones
    verified = verify(client, admin, name.upper())
    assert verified.status_code == 200, verified.text
    body = verified.json()["data"]
    assert (body["domain"], body["verified"], body["record"]) == (name, True, expected)
    assert body["verifiedAt"] is not None
    assert claim_of(client, admin, name) == body
    assert (f"_kindling-challenge.{name}", "TXT") in dns.queries
    events = db.scalars(
        select(EvidenceEvent).where(
            EvidenceEvent.organization_id == admin.organization_id, EvidenceEvent.type == "sso.domain_verified"
        )
    ).all()
    assert [(event.data, event.actor_id) for event in events] == [({"domain": name}, admin.user.id)]
    # Verified stays verified: the record may go, and asking again looks nothing up.
    dns.clear()
    assert verify(client, admin, name).json()["data"] == body
    assert dns.queries == []


def test_a_record_reached_through_a_cname_counts(client, make, openid_provider, dns):
    admin, name = make.admin(), domain()
    assert configure(client, admin, openid_provider, domains=[name]).status_code == 200
    claim = claim_of(client, admin, name)
    dns.alias(claim["record"]["name"], f"challenges.{name}")
    dns.publish(f"challenges.{name}", claim["record"]["value"])
    assert verify(client, admin, name).json()["data"]["verified"] is True


def test_only_admins_verify_and_only_domains_they_claim(client, make, openid_provider, dns):
    admin, name = make.admin(), domain()
    assert configure(client, admin, openid_provider, domains=[name]).status_code == 200
    publish(dns, claim_of(client, admin, name))
    for caller in (make.member(admin), make.manager(admin), make.consultant()):
        assert_envelope(verify(client, caller, name), 403, "forbidden")
    assert_envelope(verify(client, admin, domain()), 404)
    assert_envelope(verify(client, make.admin(), name), 404)  # another organization, with no settings
    assert_envelope(verify(client, admin, "not_a_domain"), 400, "validation_error")


def test_saving_again_keeps_a_kept_domains_record_and_verification(client, make, openid_provider, dns):
    admin, kept, dropped = make.admin(), domain(), domain()
    assert configure(client, admin, openid_provider, domains=[kept, dropped]).status_code == 200
    verified = prove(client, admin, dns, kept)
    first_record = claim_of(client, admin, dropped)["record"]
    assert configure(client, admin, openid_provider, domains=[kept.upper()]).status_code == 200
    assert claim_of(client, admin, kept) == verified
    assert configure(client, admin, openid_provider, domains=[kept, dropped]).status_code == 200
    again = claim_of(client, admin, dropped)
    assert again["verified"] is False and again["record"]["value"] != first_record["value"]


def test_an_unverified_domain_routes_no_sign_in_and_makes_no_account(client, make, db, openid_provider, dns):
    admin, name = make.admin(), domain()
    assert configure(client, admin, openid_provider, domains=[name], jitProvisioning=True).status_code == 200
    assert_envelope(start(client, f"sam@{name}"), 404, "sso_not_configured")
    # Started by the organization's slug instead, the provider's word for an email of the domain is not enough.
    slug = client.get("/api/auth/session", headers=admin.headers).json()["data"]["organization"]["slug"]
    started = client.get(f"/api/auth/sso/start?organization={slug}", follow_redirects=False)
    member = make.member(admin, email=f"known@{name}")
    for email in (f"new@{name}", member.user.email):
        callback = openid_provider.sign_in(started.headers["location"], openid_provider.person(email=email))
        assert_envelope(client.get(callback, follow_redirects=False), 403, "sso_no_account")
        started = client.get(f"/api/auth/sso/start?organization={slug}", follow_redirects=False)
    assert db.scalar(select(User).where(User.email == f"new@{name}")) is None
    prove(client, admin, dns, name)
    assert jit_sign_in(client, openid_provider, f"new@{name}").status_code == 303


def test_an_unverified_claim_never_blocks_the_organization_that_verifies(client, make, db, openid_provider, dns):
    """The attack: organization B claims organization A's domain first, without proof."""
    name, rightful, attacker = domain(), make.admin(), make.admin()
    assert configure(client, attacker, openid_provider, domains=[name], jitProvisioning=True).status_code == 200
    assert configure(client, rightful, openid_provider, domains=[name], jitProvisioning=True).status_code == 200
    assert_envelope(start(client, f"early@{name}"), 404, "sso_not_configured")  # nobody's until proven
    # The domain's DNS carries the rightful organization's record only; the attacker's claim has its own token.
    publish(dns, claim_of(client, rightful, name))
    assert_envelope(verify(client, attacker, name), 409, "domain_not_verified")
    assert verify(client, rightful, name).status_code == 200
    # The verified claim wins; the other is dropped, and cannot come back.
    assert [
        claim["domain"]
        for claim in client.get("/api/organization/sso", headers=attacker.headers).json()["data"]["emailDomains"]
    ] == []
    assert_envelope(verify(client, attacker, name), 404)
    assert_envelope(
        configure(client, attacker, openid_provider, domains=[name], jitProvisioning=True), 409, "email_domain_taken"
    )
    # Just-in-time accounts land in the organization that proved the domain.
    assert jit_sign_in(client, openid_provider, f"sam@{name}").status_code == 303
    person = db.scalar(select(User).where(User.email == f"sam@{name}"))
    assert person.organization_id == rightful.organization_id


def test_a_dns_failure_is_503_and_a_silent_resolver_answers_within_its_timeout(
    client, make, settings_with, openid_provider, dns, silent_dns_server
):
    admin, name = make.admin(), domain()
    assert configure(client, admin, openid_provider, domains=[name]).status_code == 200
    dns.failing = True
    assert "failed" in assert_envelope(verify(client, admin, name), 503, "dns_unavailable")["error"]
    settings_with(dns_nameservers=(("127.0.0.1", silent_dns_server.port),), dns_timeout=1.0)
    started = time.monotonic()
    assert "did not answer" in assert_envelope(verify(client, admin, name), 503, "dns_unavailable")["error"]
    assert time.monotonic() - started < 3
    assert claim_of(client, admin, name)["verified"] is False
