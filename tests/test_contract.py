"""schemathesis fuzzes a running server against openapi.yaml, signed in as each kind of account."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest
import requests

from kindling.persistence.database import upgrade

ROOT = pathlib.Path(__file__).resolve().parent.parent
SIGN_OUT = "kindling.handlers.auth.sign_out"
MAX_EXAMPLES = "25"


def sign_up(server, **fields) -> str:
    body = {"password": "correct horse battery", "name": "Fuzzer", "returnToken": True, **fields}
    response = requests.post(server.url + "/api/auth/sign-up", json=body, timeout=10)
    response.raise_for_status()
    return response.json()["data"]["session"]["token"]


def schemathesis(
    server, token: str, *selection: str, config: pathlib.Path = ROOT / "schemathesis.toml"
) -> subprocess.CompletedProcess:
    command = [
        sys.executable, "-m", "schemathesis.cli", "--config-file", str(config), "run", str(ROOT / "openapi.yaml"),
        "--url", server.url, "-H", f"Authorization: Bearer {token}",
        "--max-examples", MAX_EXAMPLES, "--no-color", "--seed", "1", *selection,
    ]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=900)


def failures(run: subprocess.CompletedProcess) -> str:
    """schemathesis's report from its failures on, which is what a reader needs."""
    return run.stdout[run.stdout.find("FAILURES"):][:20000] + run.stderr[-2000:]


@pytest.mark.live
@pytest.mark.parametrize("account", ["admin", "consultant"])
def test_every_operation_honours_the_contract(account, fresh_database_url, live_server):
    upgrade(fresh_database_url)
    server = live_server(
        DATABASE_URL=fresh_database_url,
        RATE_LIMIT_MULTIPLIER="1000",
        PAYMENT_WEBHOOK_SECRET="whsec_contract",
        AUTH_WEBHOOK_SECRET="whsec_Y29udHJhY3QtdGVzdC1zZWNyZXQ=",
    )
    if account == "admin":
        fields = {"email": "admin@fuzz.test", "organizationName": "Fuzzing Org"}
    else:
        fields = {"email": "consultant@fuzz.test", "accountType": "consultant"}
    everything_but_sign_out = schemathesis(server, sign_up(server, **fields), "--exclude-operation-id", SIGN_OUT)
    assert everything_but_sign_out.returncode == 0, failures(everything_but_sign_out)
    # Signing out ends the session the other operations need, so it runs last on its own.
    sign_out = schemathesis(server, sign_up(server, **{**fields, "email": "again-" + fields["email"]}), "--include-operation-id", SIGN_OUT)
    assert sign_out.returncode == 0, failures(sign_out)
