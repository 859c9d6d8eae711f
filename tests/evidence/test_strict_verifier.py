"""The offline verifier says no unless it is sure (docs/evidence.md, "What the verifier refuses")."""

from __future__ import annotations

import json

from kindling.accounts import service as accounts
from kindling.evidence import log as evidence
from kindling.evidence.signing import signer_for
from tests.helpers.evidence import export, verify_offline, verify_offline_with_key


def keys_answer(client) -> dict:
    return client.get("/api/evidence/keys").json()


def test_a_duplicated_member_name_is_refused_even_under_a_valid_signature(client, logged, tmp_path, capsys):
    """The last of two `type` members won, so a reader keeping the first saw a forged type under a valid signature."""
    bundle = export(client, logged)
    text = json.dumps(bundle)
    genuine = f'"type": "{bundle["events"][0]["type"]}"'
    forged = text.replace(genuine, '"type": "verification.decided", ' + genuine, 1)
    assert json.loads(forged) == bundle  # Python's own reader keeps the last one: the signature still holds
    code, output = verify_offline_with_key(tmp_path, capsys, client, forged)
    assert code == 1 and "'type' appears twice in one object" in output


def test_an_event_with_a_tenth_member_is_refused(client, logged, tmp_path, capsys):
    bundle = export(client, logged)
    bundle["events"][1]["note"] = "an extra member the hash does not cover"
    code, output = verify_offline_with_key(tmp_path, capsys, client, json.dumps(bundle))
    assert code == 1 and "event 2 of the file has members note it should not" in output


def test_a_bundle_with_an_extra_member_is_refused(client, logged, tmp_path, capsys):
    bundle = export(client, logged) | {"comment": "unsigned? no: signed, but not ours"}
    code, output = verify_offline_with_key(tmp_path, capsys, client, json.dumps(bundle))
    assert code == 1 and "the bundle has members comment it should not" in output


def test_a_seq_written_as_a_float_is_refused(client, logged, tmp_path, capsys):
    text = json.dumps(export(client, logged)).replace('"seq": 1,', '"seq": 1.0,', 1)
    code, output = verify_offline_with_key(tmp_path, capsys, client, text)
    assert code == 1 and "seq is not a whole number" in output


def test_nan_is_refused(client, logged, tmp_path, capsys):
    bundle = export(client, logged)
    text = json.dumps(bundle).replace('"distanceMeters": ', '"distanceMeters": NaN, "x": ', 1)
    code, output = verify_offline_with_key(tmp_path, capsys, client, text)
    assert code == 1 and "NaN is not JSON" in output


def test_an_excerpt_is_named_as_an_excerpt(client, logged, tmp_path, capsys):
    """It was reported like a full log."""
    events = client.get("/api/evidence", headers=logged.headers).json()["data"]
    excerpt = export(client, logged, **{"from": events[2]["occurredAt"]})
    code, output = verify_offline_with_key(tmp_path, capsys, client, json.dumps(excerpt))
    assert code == 0
    assert f"an EXCERPT of 5 events, seq 3 to 7, chained from hash {events[1]['hash']}" in output
    assert "whole log" not in output


def test_keys_from_a_saved_keys_answer(client, logged, tmp_path, capsys):
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps(keys_answer(client)))
    code, output = verify_offline(tmp_path, capsys, json.dumps(export(client, logged)), "--keys", str(keys))
    assert code == 0 and "verified: the whole log" in output
    answer = keys_answer(client)
    answer["data"][0]["keyId"] = answer["data"][0]["keyId"].upper()
    keys.write_text(json.dumps(answer))
    code, output = verify_offline(tmp_path, capsys, json.dumps(export(client, logged)), "--keys", str(keys))
    assert code == 2 and "lowercase hex" in output


def test_a_key_id_in_capitals_in_the_bundle_is_not_the_key(client, logged, tmp_path, capsys):
    bundle = export(client, logged)
    bundle["signature"]["keyId"] = bundle["signature"]["keyId"].upper()
    code, output = verify_offline_with_key(tmp_path, capsys, client, json.dumps(bundle))
    assert code == 1 and "not among the given public keys" in output


def test_the_signature_is_standard_padded_base64(client, logged, tmp_path, capsys):
    bundle = export(client, logged)
    value = bundle["signature"]["value"]
    assert value.endswith("==")
    for spelled in (value.rstrip("="), value.replace("+", "-").replace("/", "_")):
        altered = bundle | {"signature": bundle["signature"] | {"value": spelled}}
        code, output = verify_offline_with_key(tmp_path, capsys, client, json.dumps(altered))
        if spelled != value:
            assert code == 1 and "signature does not verify" in output


def test_the_empty_log_verifies_at_seq_0_and_64_zeros(client, db, runtime, tmp_path, capsys):
    # Everyone's joining is logged: only an organization nobody has joined yet has an empty log.
    organization = accounts.create_organization(db, name="Nobody yet")
    bundle = evidence.export(db, signer_for(runtime.settings), organization_id=organization.id)
    assert bundle["head"] == {"seq": 0, "hash": "0" * 64} and bundle["prevHash"] == "0" * 64
    code, output = verify_offline_with_key(tmp_path, capsys, client, json.dumps(bundle))
    assert code == 0 and "the whole log up to seq 0, 0 events" in output
