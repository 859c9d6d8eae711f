"""schemathesis fuzzes a running server against openapi.yaml, signed in as each kind of account.

Before the run the test builds, through the API, the state a real tenant has: an organization
whose admin accepted a consultant's invitation (an active client relationship) and whose member
joined with the join code, with acts, an opportunity open for check-in, donations and survey
answers, and a second organization whose admin is the stranger that must never see the first
organization's records (schemathesis's `object_level_authorization` replays reads as the
stranger). schemathesis.toml reads the accounts from the file named by KINDLING_CONTRACT_ACCOUNTS.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import pathlib
import subprocess
import sys

import pytest
import requests

from kindling.persistence.database import upgrade

ROOT = pathlib.Path(__file__).resolve().parent.parent
SIGN_OUT = "sign_out"
PASSWORD = "correct horse battery"
SEED = "1"
ALL_PHASES = "examples,coverage,fuzzing,stateful"
# A single operation has no links to follow, so no stateful phase.
SINGLE_OPERATION_PHASES = "examples,coverage,fuzzing"


class Api:
    """Just enough of a client to set up the state the fuzzer starts from."""

    def __init__(self, url: str) -> None:
        self.url = url

    def call(self, method: str, path: str, token: str | None = None, **kwargs) -> dict:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        response = requests.request(method, self.url + path, headers=headers, timeout=10, **kwargs)
        response.raise_for_status()
        return response.json()

    def sign_up(self, **fields) -> str:
        body = {"password": PASSWORD, "name": "Fuzzer", "returnToken": True, **fields}
        return self.call("POST", "/api/auth/sign-up", json=body)["data"]["session"]["token"]

    def sign_in(self, email: str) -> str:
        body = {"email": email, "password": PASSWORD, "returnToken": True}
        return self.call("POST", "/api/auth/sign-in", json=body)["data"]["session"]["token"]


EMAILS = {
    "admin": "admin@contract.test",
    "member": "member@contract.test",
    "consultant": "consultant@contract.test",
    "other consultant": "other-consultant@contract.test",
    "stranger": "stranger@contract.test",
}


def populate(api: Api) -> dict[str, str]:
    """Build an organization's everyday state through the API; return a session token per account."""
    tokens = {"admin": api.sign_up(email=EMAILS["admin"], organizationName="Contract Org")}
    organization = api.call("GET", "/api/auth/session", tokens["admin"])["data"]["organization"]
    tokens["member"] = api.sign_up(email=EMAILS["member"], joinCode=organization["joinCode"])
    tokens["stranger"] = api.sign_up(email=EMAILS["stranger"], organizationName="Stranger Org")
    stranger_organization = api.call("GET", "/api/auth/session", tokens["stranger"])["data"]["organization"]
    for consultant in ("consultant", "other consultant"):
        tokens[consultant] = api.sign_up(email=EMAILS[consultant], accountType="consultant", firmName="Contract Firm")
    # The consultant's client, and invitations still pending: one for the admin to answer, one for
    # the consultant to withdraw.
    invitation = api.call("POST", "/api/invitations/send", tokens["consultant"], json={"organizationId": organization["id"]})
    api.call("POST", "/api/invitations/accept", tokens["admin"], json={"invitationId": invitation["data"]["id"]})
    api.call("POST", "/api/invitations/send", tokens["other consultant"], json={"organizationId": organization["id"]})
    api.call("POST", "/api/invitations/send", tokens["consultant"], json={"organizationId": stranger_organization["id"]})

    users = {name: api.call("GET", "/api/auth/session", tokens[name])["data"]["user"]["id"] for name in ("admin", "member")}
    now = dt.datetime.now(dt.UTC)
    api.call("POST", "/api/volunteer", tokens["admin"], json={
        "title": "Park clean-up",
        "startsAt": (now - dt.timedelta(hours=1)).isoformat(),
        "endsAt": (now + dt.timedelta(hours=3)).isoformat(),
        "location": {"latitude": 51.5074, "longitude": -0.1278},
    })
    for sender, recipient in (("member", "admin"), ("admin", "member")):
        act = {"description": "Covered a shift", "category": "peer_recognition", "verificationLevel": 2}
        api.call("POST", "/api/kindness", tokens[sender], json={**act, "recipientId": users[recipient]})
        donation = {"amount": 2500, "currency": "USD", "recipient": {"name": "Food Bank"}}
        api.call("POST", "/api/donations", tokens[sender], json=donation)
        api.call("POST", "/api/wellbeing", tokens[sender], json={"mood": 4, "stress": 2, "comment": "A good week"})
    return tokens


def accounts_file(directory: pathlib.Path, account: str, stranger: str) -> pathlib.Path:
    """A Web Fuzzing Commons auth document: the account under test and the stranger."""
    path = directory / "accounts.json"
    entries = [("account", account), ("stranger", stranger)]
    document = {
        "auth": [
            {"name": name, "fixedHeaders": [{"name": "Authorization", "value": f"Bearer {token}"}]}
            for name, token in entries
        ]
    }
    path.write_text(json.dumps(document))
    return path


def schemathesis(
    server, accounts: pathlib.Path, phases: str, *selection: str, config: pathlib.Path = ROOT / "schemathesis.toml"
) -> subprocess.CompletedProcess:
    """Run schemathesis as the `account` of the `accounts` file, in `phases`, over the `selection`."""
    command = [
        sys.executable, "-m", "schemathesis.cli", "--config-file", str(config), "run", str(ROOT / "openapi.yaml"),
        "--url", server.url,
        # Every check is on, and the number of examples set, in schemathesis.toml (`--checks all`
        # here would override its exceptions, `--max-examples` its count for the stateful phase).
        "--phases", phases, "--mode", "all", "--no-color", "--seed", SEED, *selection,
    ]
    env = {**os.environ, "KINDLING_CONTRACT_ACCOUNTS": str(accounts)}
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)


def failures(run: subprocess.CompletedProcess) -> str:
    """schemathesis's report from its failures on, which is what a reader needs; without
    failures (an error of schemathesis's own), the end of its output."""
    start = run.stdout.find("FAILURES")
    report = run.stdout[start:][:20000] if start >= 0 else run.stdout[-20000:]
    return report + run.stderr[-2000:]


@pytest.mark.live
@pytest.mark.parametrize("account", ["consultant", "member", "admin"])
def test_every_operation_honours_the_contract(account, fresh_database_url, live_server, tmp_path):
    upgrade(fresh_database_url)
    server = live_server(
        DATABASE_URL=fresh_database_url,
        RATE_LIMIT_MULTIPLIER="1000",
        PAYMENT_WEBHOOK_SECRET="whsec_contract",
        AUTH_WEBHOOK_SECRET="whsec_Y29udHJhY3QtdGVzdC1zZWNyZXQ=",
    )
    api = Api(server.url)
    tokens = populate(api)
    accounts = accounts_file(tmp_path, tokens[account], tokens["stranger"])
    everything_but_sign_out = schemathesis(server, accounts, ALL_PHASES, "--exclude-operation-id", SIGN_OUT)
    assert everything_but_sign_out.returncode == 0, failures(everything_but_sign_out)
    # Signing out ends the session the other operations need, so it runs last, on a session of its own.
    accounts = accounts_file(tmp_path, api.sign_in(EMAILS[account]), tokens["stranger"])
    sign_out = schemathesis(server, accounts, SINGLE_OPERATION_PHASES, "--include-operation-id", SIGN_OUT)
    assert sign_out.returncode == 0, failures(sign_out)
