"""Running schemathesis against a live server, and the client that sets up the state it starts from."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import uuid

import requests

from kindling.donations.models import Donation
from tests.factories import PASSWORD
from tests.factories.donations import payment_event, signed
from tests.helpers import sign_up

ROOT = pathlib.Path(__file__).resolve().parents[2]
SEED = "1"
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
        return sign_up(self.url, **fields).token

    def become_client(self, consultant: str, admin: str, organization_id: str) -> None:
        """The consultant invites the admin's organization, and the admin accepts."""
        invitation = self.call("POST", "/api/invitations/send", consultant, json={"organizationId": organization_id})
        self.call("POST", "/api/invitations/accept", admin, json={"invitationId": invitation["data"]["id"]})

    def sign_in(self, email: str) -> str:
        body = {"email": email, "password": PASSWORD, "returnToken": True}
        return self.call("POST", "/api/auth/sign-in", json=body)["data"]["session"]["token"]

    def settle(self, donation: dict, *, secret: str) -> None:
        """Deliver the payment provider's signed `payment_intent.succeeded` for the donation."""
        event = payment_event(
            "payment_intent.succeeded",
            Donation(id=donation["id"], amount=donation["amount"], currency=donation["currency"]),
            event_id=f"evt_{uuid.uuid4().hex}",
        )
        payload, headers = signed(event, secret=secret)
        response = requests.post(self.url + "/webhooks/payments", data=payload, headers=headers, timeout=10)
        response.raise_for_status()


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
        sys.executable,
        "-m",
        "schemathesis.cli",
        "--config-file",
        str(config),
        "run",
        str(ROOT / "openapi.yaml"),
        "--url",
        server.url,
        # Every check is on, and the number of examples set, in schemathesis.toml (`--checks all`
        # here would override its exceptions, `--max-examples` its count for the stateful phase).
        "--phases",
        phases,
        "--mode",
        "all",
        "--no-color",
        "--seed",
        SEED,
        *selection,
    ]
    env = {**os.environ, "KINDLING_CONTRACT_ACCOUNTS": str(accounts)}
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)


def failures(run: subprocess.CompletedProcess) -> str:
    """schemathesis's report from its failures on, which is what a reader needs; without
    failures (an error of schemathesis's own), the end of its output."""
    start = run.stdout.find("FAILURES")
    report = run.stdout[start:][:20000] if start >= 0 else run.stdout[-20000:]
    return report + run.stderr[-2000:]
