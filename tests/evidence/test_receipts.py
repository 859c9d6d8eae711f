"""Receipts: the events about one act, check-in or donation with their inclusion proofs and the
signed checkpoint, for the record's owner, admins and auditors; checked offline by
`kindling evidence verify-receipt`, then and against any newer checkpoint."""

from __future__ import annotations

import base64
import json

import pytest

from kindling import cli
from kindling.donations.events import DONATION_RECORDED, DONATION_STATUS_SET
from kindling.kindness import acts as kindness
from kindling.kindness.events import ACT_CHANGED, ACT_RECORDED
from kindling.volunteering.events import CHECK_IN_CHECKED_OUT, CHECK_IN_RECORDED
from tests.factories.principals import principal
from tests.helpers import assert_envelope, rfc9162


def receipt_of(client, account, kind: str, record_id: str) -> dict:
    response = client.get(f"/api/evidence/receipts/{kind}/{record_id}", headers=account.headers)
    assert response.status_code == 200, response.text
    return response.json()


def checkpoints(client, admin) -> list[dict]:
    return client.get("/api/evidence/checkpoints", headers=admin.headers).json()["data"]


def keys_file(client, tmp_path) -> str:
    (tmp_path / "keys.json").write_text(client.get("/api/evidence/keys").text)
    return str(tmp_path / "keys.json")


def verify(client, tmp_path, capsys, receipt: dict, *extra: str) -> tuple[int, str]:
    """`kindling evidence verify-receipt` of the receipt as saved, with the log's saved keys."""
    (tmp_path / "receipt.json").write_text(json.dumps(receipt))
    code = cli.main(
        ["evidence", "verify-receipt", str(tmp_path / "receipt.json"), "--keys", keys_file(client, tmp_path), *extra]
    )
    captured = capsys.readouterr()
    return code, (captured.out + captured.err).strip()


def assert_proven(receipt: dict) -> None:
    """Each event's leaf leads by its proof to the checkpoint's root, recomputed by the RFC's own
    definitions (not Kindling's code)."""
    size, root = receipt["checkpoint"]["treeSize"], base64.b64decode(receipt["checkpoint"]["rootHash"])
    assert f"\n{size}\n{receipt['checkpoint']['rootHash']}\n\n" in receipt["checkpoint"]["note"]
    assert len(receipt["events"]) == len(receipt["inclusionProofs"]) >= 1
    for event, proof in zip(receipt["events"], receipt["inclusionProofs"], strict=True):
        leaf = rfc9162.leaf(bytes.fromhex(event["hash"]))
        assert (proof["leafIndex"], proof["treeSize"], rfc9162.unb64(proof["leafHash"])) == (
            event["seq"] - 1,
            size,
            leaf,
        )
        path = [rfc9162.unb64(node) for node in proof["proof"]]
        assert rfc9162.root_from_inclusion(event["seq"] - 1, size, leaf, path) == root


@pytest.fixture
def act(make):
    """A member's act, recorded and then changed: two events about it among others."""
    admin = make.admin()
    member = make.member(admin)
    act = make.activity.act(member)
    make.activity.act(admin)
    kindness.update_act(make.db, make.cache, caller=principal(admin), act_id=act.id, verification_level=3)
    return admin, member, act


def test_a_receipt_holds_the_records_events_proven_in_a_checkpoint_made_for_it(client, act, make):
    admin, member, record = act
    assert checkpoints(client, admin) == []
    receipt = receipt_of(client, member, "act", record.id)
    assert receipt["organizationId"] == admin.organization_id
    assert receipt["subject"] == {"kind": "act", "id": record.id}
    assert [event["type"] for event in receipt["events"]] == [ACT_RECORDED, ACT_CHANGED]
    assert all(event["subject"] == receipt["subject"] for event in receipt["events"])
    assert_proven(receipt)
    [made] = checkpoints(client, admin)  # none covered the act: one was made, as an export makes one
    assert receipt["checkpoint"] == {k: made[k] for k in ("note", "treeSize", "rootHash", "cosignatures")}
    # Asked again, the checkpoint that covers it serves; the log growing since does not matter.
    make.activity.act(member)
    assert receipt_of(client, admin, "act", record.id) == receipt
    assert len(checkpoints(client, admin)) == 1


def test_receipts_of_check_ins_and_donations(client, make):
    admin = make.admin()
    member = make.member(admin)
    check_in = make.activity.check_in(member, admin)
    donation = make.activity.donation(member)
    for kind, record_id, types in (
        ("check_in", check_in.id, [CHECK_IN_RECORDED, CHECK_IN_CHECKED_OUT]),
        ("donation", donation.id, [DONATION_RECORDED, DONATION_STATUS_SET]),
    ):
        receipt = receipt_of(client, member, kind, record_id)
        assert [event["type"] for event in receipt["events"]] == types
        assert_proven(receipt)


def test_a_kept_receipt_is_proven_against_a_newer_checkpoint_offline(client, act, make, tmp_path, capsys):
    admin, member, record = act
    kept = receipt_of(client, member, "act", record.id)
    code, output = verify(client, tmp_path, capsys, kept)
    assert code == 0 and f"2 events about act {record.id}" in output, output
    # The log grows; a newer checkpoint comes with an export, and the proof that it extends the kept one.
    for _ in range(5):
        make.activity.act(admin)
    client.post("/api/evidence/export", json={}, headers=admin.headers)
    newer = checkpoints(client, admin)[0]
    old_size = kept["checkpoint"]["treeSize"]
    assert newer["treeSize"] == old_size + 5
    (tmp_path / "newer.note").write_text(newer["note"])
    proof = client.get(
        f"/api/evidence/proofs/consistency?from={old_size}&to={newer['treeSize']}", headers=admin.headers
    ).json()
    (tmp_path / "proof.json").write_text(json.dumps(proof))
    later = ("--checkpoint", str(tmp_path / "newer.note"), "--proof", str(tmp_path / "proof.json"))
    code, output = verify(client, tmp_path, capsys, kept, *later)
    assert code == 0 and f"newer checkpoint of {newer['treeSize']} leaves, signed, extends it" in output, output
    # The listing's JSON of the checkpoint serves as well as its note.
    (tmp_path / "newer.json").write_text(json.dumps(newer))
    code, output = verify(client, tmp_path, capsys, kept, "--checkpoint", str(tmp_path / "newer.json"), *later[2:])
    assert code == 0, output
    # Without the proof nothing ties the two; a proof of other trees, or altered, proves nothing.
    code, output = verify(client, tmp_path, capsys, kept, *later[:2])
    assert code == 1 and f"consistency proof from {old_size} to {newer['treeSize']}" in output, output
    bent = dict(proof, proof=[rfc9162.b64(bytes(32)), *proof["proof"][1:]])
    (tmp_path / "proof.json").write_text(json.dumps(bent))
    code, output = verify(client, tmp_path, capsys, kept, *later)
    assert code == 1 and "does not extend the receipt's: the log was rewritten" in output, output


def test_a_receipt_altered_in_any_part_is_not_verified(client, act, tmp_path, capsys):
    admin, member, record = act
    receipt = receipt_of(client, member, "act", record.id)
    first = receipt["events"][0]
    zeros = rfc9162.b64(bytes(32))
    other_proof = dict(receipt["inclusionProofs"][0], proof=[zeros])
    forged = receipt["checkpoint"]["note"].replace(receipt["checkpoint"]["rootHash"], zeros)
    cases = {
        "the event's content does not match its hash": {
            "events": [dict(first, data={**first["data"], "x": 1}), *receipt["events"][1:]]
        },
        "its inclusion proof does not verify": {"inclusionProofs": [other_proof, *receipt["inclusionProofs"][1:]]},
        "is about another record": {"subject": {"kind": "act", "id": "someone-else"}},
        "the checkpoint's note is not of its treeSize and rootHash": {
            "checkpoint": dict(receipt["checkpoint"], rootHash=rfc9162.b64(bytes(32)))
        },
        "not lists of the same length": {"inclusionProofs": receipt["inclusionProofs"][:1]},
        # Another root, in the note and beside it: the note's signature no longer verifies.
        "the note's signature by": {"checkpoint": dict(receipt["checkpoint"], note=forged, rootHash=zeros)},
    }
    for fault, change in cases.items():
        code, output = verify(client, tmp_path, capsys, {**receipt, **change})
        assert code == 1 and fault in output, (fault, output)
    # Another log's key vouches for nothing.
    (tmp_path / "receipt.json").write_text(json.dumps(receipt))
    other = base64.b64encode(bytes(range(32))).decode()
    code = cli.main(["evidence", "verify-receipt", str(tmp_path / "receipt.json"), "--public-key", other])
    assert code == 1 and "no signature by any of the given public keys" in capsys.readouterr().err
    # Without a key nothing is vouched for: nothing was checked.
    assert cli.main(["evidence", "verify-receipt", str(tmp_path / "receipt.json")]) == 2
    assert "give --public-key or --keys FILE" in capsys.readouterr().err


def test_only_the_owner_and_admins_get_a_receipt(client, make, act):
    admin, member, record = act
    path = f"/api/evidence/receipts/act/{record.id}"
    assert client.get(path, headers=admin.headers).status_code == 200
    for someone in (make.member(admin), make.manager(admin), make.admin()):
        assert_envelope(client.get(path, headers=someone.headers), 404, "not_found")
    assert_envelope(client.get("/api/evidence/receipts/act/no-such-act", headers=admin.headers), 404, "not_found")
    # An act is not a donation: the kind is part of the record's identity.
    assert_envelope(
        client.get(f"/api/evidence/receipts/donation/{record.id}", headers=member.headers), 404, "not_found"
    )
    assert client.get(f"/api/evidence/receipts/wellbeing/{record.id}", headers=member.headers).status_code == 400
    assert client.get(path, headers=make.consultant().headers).status_code == 403
    assert client.get(path).status_code == 401
