"""End to end: `kindling serve` and two `kindling witness serve` processes on loopback. An export
is cosigned by both, verifies offline with `--witness`, and a witness that stops answering leaves
the next export unwitnessed after at most 5 s."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import secrets
import sys
import time

import pytest
import requests
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from kindling import cli
from kindling.evidence import cosignatures, notes
from tests.helpers import sign_up
from tests.servers.live import LiveServer

pytestmark = pytest.mark.live

PREFIX = "kindling.test/evidence/"


@pytest.fixture
def signing_key():
    seed = secrets.token_bytes(32)
    return base64.b64encode(seed).decode(), Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes_raw()


@pytest.fixture
def witnesses(tmp_path, signing_key):
    """Two witness processes following every log of the Kindling host the tests start."""
    log_vkey = notes.vkey(PREFIX.rstrip("/"), signing_key[1])
    started = []
    for name in ("witness.test/w1", "witness.test/w2"):
        label = name.rsplit("/", 1)[1]
        command = [
            sys.executable,
            "-m",
            "kindling.cli",
            "witness",
            "serve",
            "--state",
            str(tmp_path / f"{label}.sqlite"),
            "--key",
            str(tmp_path / f"{label}.pem"),
            "--name",
            name,
            "--origin-prefix",
            f"{PREFIX}={log_vkey}",
            "--port",
        ]
        server = LiveServer({}, command=command)
        server.wait_ready()
        deadline = time.monotonic() + 10
        while not (found := re.search(r"^witness (\S+) on ", server.log(), re.M)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert found, server.log()
        server.vkey = found.group(1)
        assert requests.get(server.url + "/vkey", timeout=5).text.strip() == server.vkey
        started.append(server)
    yield started
    for server in started:
        server.stop()


def test_kindling_and_two_witnesses_on_loopback(tmp_path, capsys, live_server, signing_key, witnesses):
    kindling = live_server(
        EVIDENCE_SIGNING_KEY=signing_key[0], PUBLIC_URL="https://kindling.test", WEBHOOK_ALLOW_PRIVATE_URLS="true"
    )
    admin = sign_up(kindling.url)
    for witness, name in zip(witnesses, ("One", "Two"), strict=True):
        added = requests.post(
            kindling.url + "/api/evidence/witnesses",
            json={"name": name, "url": witness.url, "verifierKey": witness.vkey},
            headers=admin.headers,
            timeout=10,
        )
        assert added.status_code == 201, added.text
    assert (
        requests.put(
            kindling.url + "/api/evidence/witness-policy", json={"quorum": 2}, headers=admin.headers, timeout=10
        ).status_code
        == 200
    )

    bundle = requests.post(kindling.url + "/api/evidence/export", json={}, headers=admin.headers, timeout=30).json()
    assert bundle["checkpoint"]["witnessed"] is True
    (tmp_path / "bundle.json").write_text(json.dumps(bundle))
    key = base64.b64encode(signing_key[1]).decode()
    arguments = ["evidence", "verify", str(tmp_path / "bundle.json"), "--public-key", key]
    for witness in witnesses:
        arguments += ["--witness", witness.vkey]
    assert cli.main(arguments) == 0, capsys.readouterr()
    assert "cosigned by 2 of 2 witnesses" in capsys.readouterr().out

    # The witnesses hold the checkpoint they cosigned, by the hash of its origin.
    origin = notes.split(bundle["checkpoint"]["note"])[0].split("\n")[0]

    held = requests.get(f"{witnesses[0].url}/{hashlib.sha256(origin.encode()).hexdigest()}/checkpoint", timeout=5)
    verifier = cosignatures.parse_vkey(witnesses[0].vkey)
    assert held.status_code == 200 and cosignatures.cosigned_by(held.text, [verifier])

    # One witness gone: the next export waits at most 5 s and is not witnessed (quorum 2).
    witnesses[1].stop()
    sign_up(kindling.url, joinCode=_join_code(kindling, admin))  # a new event, so a new checkpoint
    started = time.monotonic()
    later = requests.post(kindling.url + "/api/evidence/export", json={}, headers=admin.headers, timeout=30).json()
    assert later["checkpoint"]["witnessed"] is False and time.monotonic() - started < 9
    assert len(cosignatures.cosigned_by(later["checkpoint"]["note"], [verifier])) == 1
    listed = requests.get(kindling.url + "/api/evidence/witnesses", headers=admin.headers, timeout=10).json()["data"]
    assert [entry["lastError"] is None for entry in listed] == [True, False]


def _join_code(kindling, admin) -> str:
    session = requests.get(kindling.url + "/api/auth/session", headers=admin.headers, timeout=10).json()
    return session["data"]["organization"]["joinCode"]
