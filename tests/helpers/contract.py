"""Running schemathesis against a live server, and the client that sets up the state it starts from."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import tomllib
import uuid

import requests
import schemathesis as schemathesis_library
from schemathesis.config import SchemathesisConfig
from schemathesis.core.result import Ok
from schemathesis.specs.openapi.schemas import OpenApiSchema

from kindling.donations.models import Donation
from tests.factories import PASSWORD
from tests.factories.donations import payment_event, signed
from tests.helpers import sign_up

ROOT = pathlib.Path(__file__).resolve().parents[2]
SEED = "1"
# A single operation has no links to follow, so no stateful phase.
SINGLE_OPERATION_PHASES = "examples,coverage,fuzzing"

# The operations that no link of openapi.yaml feeds, each with the reason: no response of this API
# carries what it takes. Every other operation that takes an id is the target of a link, and every
# other operation a run finds wanting for data is linked (`unlinked_operations`,
# `reported_without_links`).
UNLINKED_OPERATIONS = {
    "answer_attestation": "the attestation token reaches the attester only in the email that asks them",
    "get_rate": "it takes a currency code and a day, not a record's id; 404 is a currency the ECB had not quoted by then",
    "get_report": "`framework` is one of six fixed framework names, an enum schemathesis draws itself",
    "lookup_attestation": "the attestation token reaches the attester only in the email that asks them",
    "put_sso": "`clientId` is the client id that the organization's OpenID provider issued, not one of Kindling's",
    "receive_identity_event": "`svix-id` is the identity provider's own message id, in a delivery its secret signs",
    "receive_slack_command": "the team, channel, user and trigger ids are Slack's own, in a form Slack signs",
}


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


def declared_schema(spec: pathlib.Path = ROOT / "openapi.yaml") -> OpenApiSchema:
    """`spec` as schemathesis loads it for the contract test: with the links it declares (none
    inferred yet), and schemathesis.toml's generation settings, which decide the parameters an
    operation has (not its security schemes' header and cookie). The rest of the file, whose
    accounts exist only during a run, is not needed to read the document."""
    generation = tomllib.loads((ROOT / "schemathesis.toml").read_text())["generation"]
    return schemathesis_library.openapi.from_path(spec, config=SchemathesisConfig.from_dict({"generation": generation}))


def unlinked_operations(spec: pathlib.Path = ROOT / "openapi.yaml") -> dict[str, list[str]]:
    """Every operation of `spec` that no link leads to: operationId → the ids it takes (often none).

    Read from schemathesis's own model of the document, the two things its advice "No links point
    to this operation" (in a run's "Missing test data" warning) consults: the operations that the
    declared links lead to (`operations_with_incoming_links`), and its dependency graph, whose
    inputs are the parameters and body fields it reads as a record's id. A path parameter is an id
    too. A run gives that advice only for operations that answered 404 again and again; this asks
    the schema about all of them.
    """
    schema = declared_schema(spec)
    linked = schema.operations_with_incoming_links()
    # Building the state machine checks every link: its operation, parameters and expressions.
    # `operations_with_incoming_links` would take a broken link for no links at all.
    schema.as_state_machine()
    graph = schema.analysis.dependency_graph.operations
    found = {}
    for result in schema.get_all_operations():
        if not isinstance(result, Ok):
            raise result.err()
        operation = result.ok()
        if operation.label in linked:
            continue
        ids = {f"path:{parameter.name}" for parameter in operation.path_parameters}
        node = graph.get(operation.label)
        if node is not None:
            ids |= {f"{slot.parameter_location.value}:{slot.parameter_name}" for slot in node.inputs}
        found[schema.get_operation_id(operation)] = sorted(ids)
    return found


def reported_without_links(report: pathlib.Path, spec: pathlib.Path = ROOT / "openapi.yaml") -> set[str]:
    """The operations that a run's JSON report (`--report json`) counts as missing test data
    (answering 404 again and again) and that no link of `spec` points to: those schemathesis tells
    "No links point to this operation". Operations with neither parameters nor a body it reports
    apart, as nothing could have been varied."""
    labels = json.loads(report.read_text())["warnings"]["missing_test_data"]
    schema = declared_schema(spec)
    linked = schema.operations_with_incoming_links()
    found = set()
    for label in labels:
        operation = schema.find_operation_by_label(label)
        if label in linked or operation is None:
            continue
        if operation.path_parameters or operation.query or operation.headers or operation.cookies or operation.body:
            found.add(schema.get_operation_id(operation))
    return found


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
    server,
    accounts: pathlib.Path,
    phases: str,
    *selection: str,
    config: pathlib.Path = ROOT / "schemathesis.toml",
    report: pathlib.Path | None = None,
) -> subprocess.CompletedProcess:
    """Run schemathesis as the `account` of the `accounts` file, in `phases`, over the `selection`;
    with `report`, it writes its JSON report of the run there."""
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
        *(("--report", "json", "--report-json-path", str(report)) if report is not None else ()),
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
