"""The signing key: from the environment, kept beside an embedded database, listed publicly."""

from __future__ import annotations

import base64
import hashlib
import os
import stat
import subprocess
import sys

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from kindling.config import ConfigError, Settings
from kindling.evidence.keys import embedded_key_path, make_signer
from kindling.evidence.signing import configured_keys, signer_for
from kindling.web.app import create_app

PRODUCTION = {"ENVIRONMENT": "production", "SECRET_KEY": "s" * 32, "DATABASE_URL": "postgresql+psycopg2://k@db/k"}


def seed_of(key: Ed25519PrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption())


def test_a_pem_key_and_a_base64_seed_are_the_same_key():
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    from_pem = configured_keys(Settings.from_env({**PRODUCTION, "EVIDENCE_SIGNING_KEY": pem.decode()}))
    from_seed = configured_keys(
        Settings.from_env({**PRODUCTION, "EVIDENCE_SIGNING_KEY": base64.b64encode(seed_of(key)).decode()})
    )
    # Platforms that hold variables on one line: a PEM with literal \\n sequences.
    escaped = configured_keys(
        Settings.from_env({**PRODUCTION, "EVIDENCE_SIGNING_KEY": pem.decode().replace("\n", "\\n")})
    )
    assert from_pem == from_seed == escaped == (seed_of(key), ())


def other_pem() -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()


@pytest.mark.parametrize(
    "env, says",
    [
        (PRODUCTION, "EVIDENCE_SIGNING_KEY (an Ed25519 private key: PEM, or a base64 32-byte seed) is required"),
        (
            {"EVIDENCE_SIGNING_KEY": "not base64!"},
            "EVIDENCE_SIGNING_KEY must be a PEM Ed25519 private key or a base64 32-byte seed",
        ),
        ({"EVIDENCE_SIGNING_KEY": base64.b64encode(b"short").decode()}, "decodes to 5 bytes"),
        (
            {"EVIDENCE_SIGNING_KEY": "-----BEGIN PRIVATE KEY-----\ngarbage\n-----END PRIVATE KEY-----"},
            "not an unencrypted PEM",
        ),
        ({"EVIDENCE_SIGNING_KEY": other_pem()}, "not an Ed25519 one"),
        ({"EVIDENCE_PREVIOUS_KEYS": "abc"}, "EVIDENCE_PREVIOUS_KEYS"),
        ({"EVIDENCE_PREVIOUS_KEYS": base64.b64encode(b"x" * 31).decode()}, "32 bytes, this one is 31"),
    ],
)
def test_bad_keys_fail_with_one_line(env, says):
    with pytest.raises(ConfigError) as raised:
        configured_keys(Settings.from_env(env))
    message = str(raised.value)
    assert says in message and "\n" not in message
    # Never the key itself.
    assert all(len(value) < 20 or value not in message for value in env.values())


@pytest.mark.parametrize(
    "command, env",
    [
        ("serve", PRODUCTION),
        ("serve", {"EVIDENCE_SIGNING_KEY": "not base64!"}),
        ("worker", {"EVIDENCE_SIGNING_KEY": base64.b64encode(b"short").decode()}),
    ],
)
def test_the_server_and_the_worker_refuse_to_start_without_a_good_key(tmp_path, command, env):
    result = subprocess.run(
        [sys.executable, "-m", "kindling.cli", command],
        env={"PATH": os.environ["PATH"], **env},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0 and "EVIDENCE_SIGNING_KEY" in result.stderr
    assert "Traceback" not in result.stderr
    # Refused before the embedded database or its key is made.
    assert list(tmp_path.iterdir()) == []


def test_the_app_factory_refuses_a_key_that_does_not_parse(tmp_path):
    settings = Settings.from_env(
        {"DATABASE_URL": f"sqlite:///{tmp_path / 'kindling.db'}", "EVIDENCE_PREVIOUS_KEYS": "abc"}
    )
    with pytest.raises(ConfigError, match="^EVIDENCE_PREVIOUS_KEYS: "):
        create_app(settings)
    assert list(tmp_path.iterdir()) == []


def test_an_embedded_database_makes_its_key_once_and_keeps_it(tmp_path):
    url = f"sqlite:///{tmp_path / 'kindling.db'}"
    first = make_signer(None, (), url)
    path = embedded_key_path(url)
    assert path == tmp_path / "kindling.db.evidence-key.pem"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert make_signer(None, (), url).public_key == first.public_key


def test_a_configured_key_wins_over_the_kept_one(tmp_path):
    url = f"sqlite:///{tmp_path / 'kindling.db'}"
    seed = bytes(32)
    signer = make_signer(seed, (), url)
    assert signer.public_key == Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw
    )
    assert not embedded_key_path(url).exists()


def test_keys_are_public_and_identified_by_their_hash(client, runtime):
    response = client.get("/api/evidence/keys")
    assert response.status_code == 200
    [key] = response.json()["data"]
    raw = base64.b64decode(key["publicKey"])
    assert key == {"keyId": hashlib.sha256(raw).hexdigest()[:16], "algorithm": "Ed25519", "publicKey": key["publicKey"]}
    assert raw == signer_for(runtime.settings).public_key
