"""schemathesis fuzzes a running server against openapi.yaml, signed in as each kind of account.

Before the run the test builds, through the API, the state a real tenant has: an organization
whose admin accepted a consultant's invitation (an active client relationship) and whose member
joined with the join code, with acts, an opportunity open for check-in, donations and survey
answers, and a second organization whose admin is the stranger that must never see the first
organization's records (schemathesis's `object_level_authorization` replays reads as the
stranger). The organization also has a manager, who may approve colleagues' acts, and an auditor: a member
with the auditor grant. schemathesis.toml reads the accounts from the file named by KINDLING_CONTRACT_ACCOUNTS.
"""

from __future__ import annotations

import datetime as dt
import pathlib

import pytest

from kindling.platform.database import upgrade
from tests.helpers.contract import (
    SINGLE_OPERATION_PHASES,
    UNLINKED_OPERATIONS,
    Api,
    accounts_file,
    failures,
    reported_without_links,
    schemathesis,
    unlinked_operations,
)

SIGN_OUT = "sign_out"
SCIM_PATHS = "^/scim/v2"
PAYMENT_SECRET = "whsec_contract"
ALL_PHASES = "examples,coverage,fuzzing,stateful"

EMAILS = {
    "admin": "admin@contract.test",
    "member": "member@contract.test",
    "manager": "manager@contract.test",
    "auditor": "auditor@contract.test",
    "consultant": "consultant@contract.test",
    "other consultant": "other-consultant@contract.test",
    "stranger": "stranger@contract.test",
}


def populate(api: Api, database_url: str) -> dict[str, str]:
    """Build an organization's everyday state through the API; return a session token per account."""
    tokens = {"admin": api.sign_up(email=EMAILS["admin"], organizationName="Contract Org")}
    organization = api.call("GET", "/api/auth/session", tokens["admin"])["data"]["organization"]
    tokens["member"] = api.sign_up(email=EMAILS["member"], joinCode=organization["joinCode"])
    tokens["manager"] = api.sign_up(email=EMAILS["manager"], joinCode=organization["joinCode"])
    manager_id = api.call("GET", "/api/auth/session", tokens["manager"])["data"]["user"]["id"]
    api.call("PATCH", f"/api/organization/members/{manager_id}", tokens["admin"], json={"role": "manager"})
    # A member with the auditor grant beside the role.
    tokens["auditor"] = api.sign_up(email=EMAILS["auditor"], joinCode=organization["joinCode"])
    auditor_id = api.call("GET", "/api/auth/session", tokens["auditor"])["data"]["user"]["id"]
    api.call("PATCH", f"/api/organization/members/{auditor_id}", tokens["admin"], json={"auditor": True})
    tokens["stranger"] = api.sign_up(email=EMAILS["stranger"], organizationName="Stranger Org")
    stranger_organization = api.call("GET", "/api/auth/session", tokens["stranger"])["data"]["organization"]
    for consultant in ("consultant", "other consultant"):
        tokens[consultant] = api.sign_up(email=EMAILS[consultant], accountType="consultant", firmName="Contract Firm")
    # The consultant's client, and invitations still pending: one for the admin to answer, one for
    # the consultant to withdraw.
    api.become_client(tokens["consultant"], tokens["admin"], organization["id"])
    api.call("POST", "/api/invitations/send", tokens["other consultant"], json={"organizationId": organization["id"]})
    api.call(
        "POST", "/api/invitations/send", tokens["consultant"], json={"organizationId": stranger_organization["id"]}
    )

    users = {
        name: api.call("GET", "/api/auth/session", tokens[name])["data"]["user"]["id"] for name in ("admin", "member")
    }
    now = dt.datetime.now(dt.UTC)
    opportunity = api.call(
        "POST",
        "/api/volunteer",
        tokens["admin"],
        json={
            "title": "Park clean-up",
            "startsAt": (now - dt.timedelta(hours=1)).isoformat(),
            "endsAt": (now + dt.timedelta(hours=3)).isoformat(),
            "location": {"latitude": 51.5074, "longitude": -0.1278},
            "requireCode": True,
        },
    )["data"]
    # A check-in without the venue's code, for organisers to list and approve.
    api.call(
        "POST",
        f"/api/volunteer/{opportunity['id']}/check-in",
        tokens["member"],
        json={"latitude": 51.5074, "longitude": -0.1278},
    )
    for sender, recipient in (("member", "admin"), ("admin", "member")):
        act = {"description": "Covered a shift", "category": "peer_recognition", "verificationLevel": 2}
        api.call("POST", "/api/kindness", tokens[sender], json={**act, "recipientId": users[recipient]})
        # Waiting for a manager's approval and for an external attester.
        for level in (3, 5):
            api.call(
                "POST",
                "/api/kindness",
                tokens[sender],
                json={**act, "verificationLevel": level, "recipientId": "outsider"},
            )
        donation = {"amount": 2500, "currency": "USD", "recipient": {"name": "Food Bank"}}
        api.call("POST", "/api/donations", tokens[sender], json=donation)
        api.call("POST", "/api/wellbeing", tokens[sender], json={"mood": 4, "stress": 2, "comment": "A good week"})
    # Giving programs, and a donation of each person matched by the payment webhook: requests
    # awaiting review, for admins and managers to decide and pay.
    api.call(
        "POST",
        "/api/giving/programs",
        tokens["admin"],
        json={
            "name": "Gift match",
            "kind": "donation_match",
            "ratioPercent": 100,
            "perPersonCap": 100_000,
            "approval": "review",
        },
    )
    api.call(
        "POST",
        "/api/giving/programs",
        tokens["admin"],
        json={
            "name": "Dollars for doers",
            "kind": "volunteer_grant",
            "ratePerHour": 1000,
            "perPersonCap": 100_000,
            "approval": "review",
        },
    )
    for sender in ("member", "admin"):
        donation = api.call(
            "POST",
            "/api/donations",
            tokens[sender],
            json={"amount": 4000, "currency": "USD", "recipient": {"name": "Shelter"}},
        )["data"]
        api.settle(donation, secret=PAYMENT_SECRET)
    return tokens


def assert_linked(report: pathlib.Path) -> None:
    """Every operation schemathesis found no data for is fed by a link, or is an exception."""
    unfed = reported_without_links(report) - UNLINKED_OPERATIONS.keys()
    assert not unfed, (
        f"schemathesis got 404 after 404 from {sorted(unfed)}, and no link feeds them: link a response that carries "
        "what they take, or list them in UNLINKED_OPERATIONS with the reason none does"
    )


@pytest.mark.live
@pytest.mark.parametrize("account", ["consultant", "member", "manager", "auditor", "admin"])
def test_every_operation_honours_the_contract(account, fresh_database_url, live_server, mailbox, tmp_path):
    upgrade(fresh_database_url)
    server = live_server(
        DATABASE_URL=fresh_database_url,
        RATE_LIMIT_MULTIPLIER="1000",
        PAYMENT_WEBHOOK_SECRET=PAYMENT_SECRET,
        AUTH_WEBHOOK_SECRET="whsec_Y29udHJhY3QtdGVzdC1zZWNyZXQ=",
        # Attestation requests are mailed, to the test's SMTP server.
        SMTP_URL=mailbox.url,
        MAIL_FROM="attest@contract.test",
        PUBLIC_URL="https://kindling.test",
        # The Slack app, whose requests schemathesis cannot sign; Slack's API is never reached.
        SLACK_CLIENT_ID="1.2",
        SLACK_CLIENT_SECRET="contract-client-secret",
        SLACK_SIGNING_SECRET="contract-signing-secret",
        SECRET_KEY="contract-secret-key-of-32-characters!",
    )
    api = Api(server.url)
    tokens = populate(api, fresh_database_url)
    # Signing out ends the session it is sent with, so it runs on a session of its own, and first:
    # the other operations may remove this very account (an admin may promote a colleague, then
    # be removed), after which it could not sign in again.
    accounts = accounts_file(tmp_path, api.sign_in(EMAILS[account]), tokens["stranger"])
    sign_out = schemathesis(server, accounts, SINGLE_OPERATION_PHASES, "--include-operation-id", SIGN_OUT)
    assert sign_out.returncode == 0, failures(sign_out)
    accounts = accounts_file(tmp_path, tokens[account], tokens["stranger"])
    # /scim/v2 takes an organization's SCIM token, not a session: its own test below.
    report = tmp_path / "report.json"
    everything_but_sign_out = schemathesis(
        server,
        accounts,
        ALL_PHASES,
        "--exclude-operation-id",
        SIGN_OUT,
        "--exclude-path-regex",
        SCIM_PATHS,
        report=report,
    )
    assert everything_but_sign_out.returncode == 0, failures(everything_but_sign_out)
    assert_linked(report)


@pytest.mark.live
def test_every_scim_operation_honours_the_contract(fresh_database_url, live_server, tmp_path):
    """/scim/v2 as an organization's identity provider, with the SCIM token of an organization that
    has people and a group; the stranger is another organization's SCIM token."""
    upgrade(fresh_database_url)
    server = live_server(DATABASE_URL=fresh_database_url, RATE_LIMIT_MULTIPLIER="1000")
    api = Api(server.url)
    scim_tokens = []
    for name in ("SCIM Org", "SCIM Stranger Org"):
        admin = api.sign_up(email=f"admin@{name.lower().replace(' ', '-')}.test", organizationName=name)
        scim_tokens.append(
            api.call("POST", "/api/organization/scim-tokens", admin, json={"description": "contract"})["data"]["token"]
        )
    person = {"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"], "userName": "ada@scim.test", "active": True}
    user_id = api.call("POST", "/scim/v2/Users", scim_tokens[0], json=person)["id"]
    group = {
        "schemas": ["urn:ietf:params:scim:schemas:core:2.0:Group"],
        "displayName": "Leads",
        "members": [{"value": user_id}],
    }
    api.call("POST", "/scim/v2/Groups", scim_tokens[0], json=group)
    accounts = accounts_file(tmp_path, *scim_tokens)
    report = tmp_path / "report.json"
    run = schemathesis(server, accounts, ALL_PHASES, "--include-path-regex", SCIM_PATHS, report=report)
    assert run.returncode == 0, failures(run)
    assert_linked(report)


def test_every_operation_that_takes_an_id_is_fed_by_a_link():
    """Each id an operation takes comes from a response through an OpenAPI link, so that generated
    clients and schemathesis's stateful phase reach it with a real record; or the operation is one
    of the exceptions, with the reason no response carries it."""
    unlinked = unlinked_operations()
    unfed = {
        operation: ids for operation, ids in sorted(unlinked.items()) if ids and operation not in UNLINKED_OPERATIONS
    }
    assert not unfed, (
        "No link feeds the ids of these operations: link a response that carries them, or list the operation in "
        f"UNLINKED_OPERATIONS with the reason none does: {unfed}"
    )
    assert not UNLINKED_OPERATIONS.keys() - unlinked.keys(), "Linked now (or gone), so no longer exceptions"
    assert all(reason.strip() for reason in UNLINKED_OPERATIONS.values())
