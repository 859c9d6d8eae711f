"""Signed bundles, checked offline by `kindling evidence verify` and by a verifier of the test's own."""

from __future__ import annotations

import base64
import copy
import json
import subprocess
import sys

import pytest

from kindling import cli
from kindling.config import Settings
from kindling.evidence import log as evidence
from kindling.evidence.keys import parse_private_key
from kindling.evidence.signing import signer_for
from tests.helpers import assert_envelope, rfc9162
from tests.helpers.evidence import ROTATED_SEED, export, public_key, verify_offline


def run_verify(tmp_path, capsys, bundle: dict, *keys: str) -> tuple[int, str]:
    return verify_offline(tmp_path, capsys, bundle, *(arg for key in keys for arg in ("--public-key", key)))


def test_a_good_bundle_verifies(client, logged, tmp_path, capsys):
    bundle = export(client, logged)
    assert bundle["prevHash"] == "0" * 64 and len(bundle["events"]) == 7
    assert bundle["head"] == {"seq": 7, "hash": bundle["events"][-1]["hash"]}
    assert bundle["signature"]["algorithm"] == "Ed25519"
    code, output = run_verify(tmp_path, capsys, bundle, public_key(client))
    assert code == 0 and "verified: the whole log up to seq 7, 7 events" in output and "signature by key" in output


def test_without_a_key_nothing_is_vouched_for(client, logged, tmp_path, capsys):
    """It checked the chain and exited 0."""
    code, output = run_verify(tmp_path, capsys, export(client, logged))
    assert code == 2 and "--public-key or --keys" in output and "verified" not in output


def altered_event(bundle):
    bundle["events"][4]["data"]["verified"] = not bundle["events"][4]["data"]["verified"]


def reordered(bundle):
    bundle["events"][1], bundle["events"][2] = bundle["events"][2], bundle["events"][1]


def dropped(bundle):
    del bundle["events"][3]


def dropped_last(bundle):
    del bundle["events"][-1]


def altered_signature(bundle):
    value = bytearray(base64.b64decode(bundle["signature"]["value"]))
    value[0] ^= 1
    bundle["signature"]["value"] = base64.b64encode(bytes(value)).decode()


def altered_head(bundle):
    bundle["head"]["seq"] = 6


@pytest.mark.parametrize(
    "damage, says",
    [
        (altered_event, "chain broken at seq 5: seq 5: the event's content does not match its hash"),
        (reordered, "chain broken at seq 2: seq 2 is missing or out of order"),
        (dropped, "chain broken at seq 4: seq 4 is missing or out of order"),
        (dropped_last, "chain broken at seq 7: the chain ends at seq 6, before its head seq 7"),
        (altered_head, "chain broken at seq 6"),
        (altered_signature, "signature does not verify with key"),
    ],
)
def test_a_damaged_bundle_fails_with_one_line(client, logged, tmp_path, capsys, damage, says):
    bundle = export(client, logged)
    damage(bundle)
    code, output = run_verify(tmp_path, capsys, bundle, public_key(client))
    assert code == 1
    assert output.count("\n") == 0 and output.startswith("NOT VERIFIED: ") and says in output


def test_the_wrong_key_fails_with_one_line(client, logged, tmp_path, capsys):
    other = base64.b64encode(_public(parse_private_key(ROTATED_SEED))).decode()
    code, output = run_verify(tmp_path, capsys, export(client, logged), other)
    assert code == 1 and output.count("\n") == 0 and "is not among the given public keys" in output


def test_a_signature_copied_from_another_bundle_fails(client, logged, tmp_path, capsys):
    first, second = export(client, logged), export(client, logged, **{"from": "2000-01-01T00:00:00Z"})
    second["signedAt"] = "2000-01-01T00:00:00.000000Z"
    second["signature"] = first["signature"]
    code, output = run_verify(tmp_path, capsys, second, public_key(client))
    assert code == 1 and "signature does not verify" in output


def test_an_excerpt_carries_the_hash_it_starts_from(client, logged, tmp_path, capsys):
    events = client.get("/api/evidence", headers=logged.headers).json()["data"]
    excerpt = export(client, logged, **{"from": events[1]["occurredAt"], "to": events[3]["occurredAt"]})
    assert [e["seq"] for e in excerpt["events"]] == [2, 3, 4]
    assert excerpt["prevHash"] == events[0]["hash"] and excerpt["head"] == {"seq": 4, "hash": events[3]["hash"]}
    code, _ = run_verify(tmp_path, capsys, excerpt, public_key(client))
    assert code == 0
    excerpt["prevHash"] = "0" * 64
    code, output = run_verify(tmp_path, capsys, excerpt, public_key(client))
    assert code == 1 and "seq 2: prevHash does not match" in output


def test_a_range_over_the_limit_is_refused_and_excerpts_within_it_chain(client, logged, monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(evidence, "EXPORT_LIMIT", 3)
    response = client.post("/api/evidence/export", json={}, headers=logged.headers)
    assert_envelope(response, 400, "export_too_large")
    assert response.json()["details"] == {"events": 7, "limit": 3}
    events = client.get("/api/evidence", headers=logged.headers).json()["data"]
    first = export(client, logged, **{"to": events[2]["occurredAt"]})
    second = export(client, logged, **{"from": events[3]["occurredAt"], "to": events[5]["occurredAt"]})
    third = export(client, logged, **{"from": events[6]["occurredAt"]})
    assert [e["seq"] for e in first["events"] + second["events"] + third["events"]] == [1, 2, 3, 4, 5, 6, 7]
    assert second["prevHash"] == first["head"]["hash"] and third["prevHash"] == second["head"]["hash"]
    for bundle in (first, second, third):
        assert run_verify(tmp_path, capsys, bundle, public_key(client))[0] == 0


def test_an_empty_excerpt_verifies(client, logged, tmp_path, capsys):
    bundle = export(client, logged, **{"from": "2000-01-01T00:00:00Z", "to": "2000-01-02T00:00:00Z"})
    assert bundle["events"] == [] and bundle["head"]["seq"] == 7
    assert run_verify(tmp_path, capsys, bundle, public_key(client))[0] == 0


def test_bad_input_to_the_command(tmp_path, capsys):
    key = ["--public-key", ROTATED_SEED]  # any 32 bytes serve as a key here
    missing = cli.main(["evidence", "verify", str(tmp_path / "none.json"), *key])
    (tmp_path / "bad.json").write_text("{not json")
    unreadable = cli.main(["evidence", "verify", str(tmp_path / "bad.json"), *key])
    (tmp_path / "list.json").write_text("[]")
    not_a_bundle = cli.main(["evidence", "verify", str(tmp_path / "list.json"), *key])
    (tmp_path / "partial.json").write_text('{"events": []}')
    partial = cli.main(["evidence", "verify", str(tmp_path / "partial.json"), *key])
    bad_key = cli.main(["evidence", "verify", str(tmp_path / "partial.json"), "--public-key", "short"])
    lines = capsys.readouterr().err.strip().splitlines()
    assert (missing, unreadable, not_a_bundle, partial, bad_key) == (2, 2, 1, 1, 2)
    assert (
        len(lines) == 5 and "is not a JSON object" in lines[2] and "has no" in lines[3] and "--public-key" in lines[4]
    )


def test_the_command_needs_no_server_no_database_and_no_configuration(client, logged, tmp_path):
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(export(client, logged)))
    probe = (
        "import sys; from kindling import cli; code = cli.main(sys.argv[1:]); "
        "loaded = [m for m in sys.modules if m.split('.')[0] in ('sqlalchemy', 'flask', 'connexion', 'psycopg2') "
        "or m in ('kindling.web.app', 'kindling.persistence', 'kindling.services')]; "
        "print('loaded:', loaded); sys.exit(code)"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe, "evidence", "verify", str(path), "--public-key", public_key(client)],
        # A production environment with nothing configured: the server would refuse to start.
        env={"PATH": "/usr/bin:/bin", "ENVIRONMENT": "production", "DATABASE_URL": "postgresql://nowhere.invalid/x"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert "loaded: []" in result.stdout and "verified: the whole log up to seq 7" in result.stdout


def test_a_rotated_key_stays_listed_and_its_bundles_still_verify(
    client, logged, settings, settings_with, tmp_path, capsys
):
    old_key = public_key(client)
    old_bundle = export(client, logged)
    # What a restart with EVIDENCE_SIGNING_KEY=<new> and EVIDENCE_PREVIOUS_KEYS=<old> makes.
    rotated = Settings.from_env({"EVIDENCE_SIGNING_KEY": ROTATED_SEED, "EVIDENCE_PREVIOUS_KEYS": old_key})
    settings_with(
        evidence_signing_key=rotated.evidence_signing_key, evidence_previous_keys=rotated.evidence_previous_keys
    )
    listed = client.get("/api/evidence/keys").json()["data"]
    new_bundle = export(client, logged)
    assert [key["publicKey"] for key in listed][1:] == [old_key]
    assert new_bundle["signature"]["keyId"] == listed[0]["keyId"] != old_bundle["signature"]["keyId"]
    every_key = [key["publicKey"] for key in listed]
    assert run_verify(tmp_path, capsys, old_bundle, *every_key)[0] == 0
    assert run_verify(tmp_path, capsys, new_bundle, *every_key)[0] == 0
    assert run_verify(tmp_path, capsys, old_bundle, listed[0]["publicKey"])[0] == 1


def _public(seed: bytes) -> bytes:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    return Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


# --- an independent verifier: the documented algorithm, with no Kindling code ---


def independent_verify(bundle: dict, public_key_b64: str) -> bool:
    import hashlib

    import rfc8785
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    raw_key = base64.b64decode(public_key_b64)
    if hashlib.sha256(raw_key).hexdigest()[:16] != bundle["signature"]["keyId"]:
        return False
    unsigned = {name: value for name, value in bundle.items() if name != "signature"}
    try:
        Ed25519PublicKey.from_public_bytes(raw_key).verify(
            base64.b64decode(bundle["signature"]["value"]), rfc8785.dumps(unsigned)
        )
    except InvalidSignature:
        return False
    prev, seq = bundle["prevHash"], (bundle["events"][0]["seq"] - 1 if bundle["events"] else bundle["head"]["seq"])
    for event in bundle["events"]:
        body = {name: value for name, value in event.items() if name != "hash"}
        if event["seq"] != seq + 1 or event["prevHash"] != prev:
            return False
        if hashlib.sha256(rfc8785.dumps(body)).hexdigest() != event["hash"]:
            return False
        prev, seq = event["hash"], event["seq"]
    return bundle["head"] == {"seq": seq, "hash": prev}


def test_an_independent_verifier_agrees(client, logged):
    key = public_key(client)
    bundle = export(client, logged)
    assert independent_verify(bundle, key)
    for damage in (altered_event, reordered, dropped, dropped_last, altered_signature):
        damaged = copy.deepcopy(bundle)
        damage(damaged)
        assert not independent_verify(damaged, key), damage.__name__


def independent_verify_tree(bundle: dict, public_key_b64: str) -> bool:
    """docs/evidence.md's check of a whole bundle's checkpoint: the note signed under its origin,
    its size and root the bundle's, the root that of the RFC 9162 tree of the events' hashes."""
    import hashlib

    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    key, checkpoint = base64.b64decode(public_key_b64), bundle["checkpoint"]
    text, _, signatures = checkpoint["note"].rpartition("\n\n")
    text += "\n"
    origin, size, root = text.splitlines()
    if not origin.endswith("/evidence/" + bundle["organizationId"]) or (int(size), root) != (
        checkpoint["treeSize"],
        checkpoint["rootHash"],
    ):
        return False
    key_id = hashlib.sha256(origin.encode() + b"\n\x01" + key).digest()[:4]
    for line in signatures.splitlines():
        name, value = line.removeprefix("\u2014 ").split(" ")
        raw = base64.b64decode(value)
        if name == origin and raw[:4] == key_id:
            try:
                Ed25519PublicKey.from_public_bytes(key).verify(raw[4:], text.encode())
            except InvalidSignature:
                return False
            break
    else:
        return False
    leaves = [bytes.fromhex(event["hash"]) for event in bundle["events"]]
    return int(size) == len(leaves) and base64.b64encode(rfc9162.mth(leaves)).decode() == root


def test_an_independent_verifier_agrees_on_the_tree(client, logged, tmp_path, capsys):
    key = public_key(client)
    bundle = export(client, logged)
    assert independent_verify_tree(bundle, key)
    code, output = run_verify(tmp_path, capsys, bundle, key)
    leaves = len(bundle["events"])
    assert code == 0 and f"its tree of {leaves} leaves has the root of its checkpoint note" in output
    damaged = copy.deepcopy(bundle)
    dropped_last(damaged)
    assert not independent_verify_tree(damaged, key)
    damaged = copy.deepcopy(bundle)
    damaged["events"][0]["hash"] = "0" * 64
    assert not independent_verify_tree(damaged, key)


def test_a_bundle_of_before_checkpoints_were_notes_still_verifies(client, logged, tmp_path, capsys, runtime):
    """Bundles signed before this release have six members; they verify as they did."""
    from kindling.evidence.chain import signed_bytes

    bundle = export(client, logged)
    del bundle["checkpoint"]
    bundle["signature"]["value"] = signer_for(runtime.settings).sign(signed_bytes(bundle))
    code, output = run_verify(tmp_path, capsys, bundle, public_key(client))
    assert code == 0 and "no checkpoint of its tree" in output, output
