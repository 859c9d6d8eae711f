"""Witnesses of the evidence log: listed by admins and consultants, sent each checkpoint by
c2sp.org/tlog-witness, their cosignatures verified, kept and served, and a witness's refusal of an
inconsistent checkpoint raising the fork alarm and stopping signing. The witnesses are
`kindling witness serve`'s server, on loopback."""

from __future__ import annotations

import base64
import json
import socket
import threading
import time

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from sqlalchemy import select

from kindling.compliance import exports
from kindling.evidence import checkpoints, cosignatures, notes, witness_server, witnessing
from kindling.evidence.chain import signed_bytes
from kindling.evidence.keys import Signer
from kindling.evidence.models import EvidenceWitness
from kindling.evidence.signing import signer_for
from kindling.outbox.models import WebhookEvent
from kindling.platform.destinations import DestinationPolicy
from kindling.wellbeing import service as wellbeing
from tests.helpers.evidence import export, verify_offline_with_key

LOOPBACK = DestinationPolicy(allow_private=True)


class Running:
    """A witness server on loopback: its URL, vkey and state."""

    def __init__(self, tmp_path, name: str, log_key: bytes, prefix: str = "kindling.test/evidence/") -> None:
        logs = witness_server.Logs({}, {prefix: [log_key]})
        state = witness_server.State(str(tmp_path / f"{name.replace('/', '_')}.sqlite"))
        self.witness = witness_server.Witness(name, Ed25519PrivateKey.generate(), logs, state)
        self.server = witness_server.server(self.witness, "127.0.0.1", 0)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.vkey = self.witness.vkey

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def start_witness(tmp_path, runtime):
    started: list[Running] = []

    def start(name: str, log_key: bytes | None = None, **options) -> Running:
        running = Running(tmp_path, name, log_key or signer_for(runtime.settings).public_key, **options)
        started.append(running)
        return running

    yield start
    for running in started:
        running.stop()


@pytest.fixture
def loopback(settings_with):
    """Witness URLs on loopback allowed, as WEBHOOK_ALLOW_PRIVATE_URLS=true does."""
    settings_with(webhook_allow_private_urls=True)


def add(client, admin, witness: Running, name: str = "Auditor") -> dict:
    response = client.post(
        "/api/evidence/witnesses",
        json={"name": name, "url": witness.url, "verifierKey": witness.vkey},
        headers=admin.headers,
    )
    assert response.status_code == 201, response.text
    return response.json()["data"]


def fork_events(db) -> list[dict]:
    found = db.scalars(select(WebhookEvent.body).where(WebhookEvent.type == "evidence.fork_detected")).all()
    return [json.loads(body)["data"] for body in found]


def test_admins_list_add_and_remove_witnesses_and_set_the_quorum(client, logged, make, start_witness, loopback):
    witness = start_witness("witness.test/w1")
    added = add(client, logged, witness)
    assert added["addedBy"] == "organization" and added["cosignedSize"] == 0 and added["forkDetectedAt"] is None
    listed = client.get("/api/evidence/witnesses", headers=logged.headers).json()["data"]
    assert [entry["id"] for entry in listed] == [added["id"]]
    again = client.post(
        "/api/evidence/witnesses",
        json={"name": "Again", "url": witness.url, "verifierKey": witness.vkey},
        headers=logged.headers,
    )
    assert again.status_code == 409 and again.json()["code"] == "witness_exists"

    policy = client.put("/api/evidence/witness-policy", json={"quorum": 2}, headers=logged.headers)
    assert policy.status_code == 200 and policy.json()["data"] == {"quorum": 2, "witnesses": 1}

    member = make.member(logged)
    assert client.get("/api/evidence/witnesses", headers=member.headers).status_code == 403
    assert client.delete(f"/api/evidence/witnesses/{added['id']}", headers=logged.headers).status_code == 204
    assert client.delete(f"/api/evidence/witnesses/{added['id']}", headers=logged.headers).status_code == 404
    assert client.get("/api/evidence/witnesses", headers=logged.headers).json()["data"] == []


def test_a_witness_needs_a_cosignature_vkey_and_an_allowed_destination(client, logged, start_witness):
    witness = start_witness("witness.test/w1")
    note_key = notes.vkey("witness.test/w1", Ed25519PrivateKey.generate().public_key().public_bytes_raw())
    wrong_type = client.post(
        "/api/evidence/witnesses",
        json={"name": "Auditor", "url": "https://witness.example.com", "verifierKey": note_key},
        headers=logged.headers,
    )
    assert wrong_type.status_code == 400 and wrong_type.json()["code"] == "invalid_verifier_key"
    # Loopback is refused as for webhooks, unless private destinations are allowed.
    inward = client.post(
        "/api/evidence/witnesses",
        json={"name": "Auditor", "url": witness.url, "verifierKey": witness.vkey},
        headers=logged.headers,
    )
    assert inward.status_code == 400 and inward.json()["code"] == "destination_not_allowed"


def test_consultants_of_the_organization_add_and_list_their_own(client, logged, make, start_witness, loopback):
    consultant, stranger = make.consultant(), make.consultant()
    make.client(consultant, logged)
    ours, theirs = start_witness("witness.test/ours"), start_witness("witness.test/consultant")
    add(client, logged, ours)
    path = f"/api/clients/{logged.organization_id}/witnesses"
    body = {"name": "Consultant's witness", "url": theirs.url, "verifierKey": theirs.vkey}
    created = client.post(path, json=body, headers=consultant.headers)
    assert created.status_code == 201, created.text
    assert created.json()["data"]["addedBy"] == "consultant"
    own = client.get(path, headers=consultant.headers).json()["data"]
    assert [entry["verifierKey"] for entry in own] == [theirs.vkey]
    every = client.get("/api/evidence/witnesses", headers=logged.headers).json()["data"]
    assert {entry["verifierKey"] for entry in every} == {ours.vkey, theirs.vkey}
    assert client.post(path, json=body, headers=stranger.headers).status_code == 404
    assert client.get(path, headers=stranger.headers).status_code == 404


def test_an_export_waits_for_the_quorum_and_states_witnessed(client, db, logged, start_witness, loopback):
    first, second = start_witness("witness.test/w1"), start_witness("witness.test/w2")
    add(client, logged, first, "One")
    add(client, logged, second, "Two")
    client.put("/api/evidence/witness-policy", json={"quorum": 2}, headers=logged.headers)
    bundle = export(client, logged)
    assert bundle["checkpoint"]["witnessed"] is True
    verifiers = [cosignatures.parse_vkey(first.vkey), cosignatures.parse_vkey(second.vkey)]
    assert set(cosignatures.cosigned_by(bundle["checkpoint"]["note"], verifiers)) == {first.vkey, second.vkey}
    [listed] = client.get("/api/evidence/checkpoints", headers=logged.headers).json()["data"]
    assert {entry["name"] for entry in listed["cosignatures"]} == {"witness.test/w1", "witness.test/w2"}
    assert listed["note"] == bundle["checkpoint"]["note"]
    witnesses = client.get("/api/evidence/witnesses", headers=logged.headers).json()["data"]
    assert {entry["cosignedSize"] for entry in witnesses} == {listed["treeSize"]}

    # A quorum of three is not met by two witnesses.
    client.put("/api/evidence/witness-policy", json={"quorum": 3}, headers=logged.headers)
    assert export(client, logged)["checkpoint"]["witnessed"] is False


def test_a_stale_size_is_retried_once_from_the_witness_size(client, db, logged, make, start_witness, loopback):
    witness = start_witness("witness.test/w1")
    added = add(client, logged, witness)
    export(client, logged)
    make.activity.act(logged)
    # Kindling forgot what the witness cosigned: its 409 says, and the retry from there succeeds.
    db.get(EvidenceWitness, added["id"]).size = 0
    bundle = export(client, logged)
    assert bundle["checkpoint"]["witnessed"] is True
    assert witness.witness.state.latest(notes.split(bundle["checkpoint"]["note"])[0].split("\n")[0])[0] == 8


def test_unknown_origins_and_keys_are_kept_as_the_witness_error(client, db, logged, start_witness, loopback):
    elsewhere = start_witness("witness.test/elsewhere", prefix="other.test/")
    distrusting = start_witness("witness.test/distrusting", log_key=Signer(Ed25519PrivateKey.generate()).public_key)
    add(client, logged, elsewhere, "Elsewhere")
    add(client, logged, distrusting, "Distrusting")
    assert export(client, logged)["checkpoint"]["witnessed"] is False
    errors = {
        entry["name"]: entry["lastError"]
        for entry in client.get("/api/evidence/witnesses", headers=logged.headers).json()["data"]
    }
    assert errors["Elsewhere"].startswith("404") and errors["Distrusting"].startswith("403")


def _sign_other_log(runtime, origin: str, size: int) -> str:
    """A checkpoint of `size` leaves Kindling's log never had, signed with its key: what a
    witness holds once the log was rewritten and its checkpoints table with it."""
    root = bytes(range(32))
    return signer_for(runtime.settings).sign_note(notes.checkpoint_text(origin, size, root), origin)


@pytest.mark.parametrize("ahead", [5, 0])
def test_a_witness_that_saw_another_log_raises_the_fork_alarm_and_stops_signing(
    client, db, logged, make, runtime, start_witness, loopback, ahead
):
    """Ahead: the witness cosigned a larger tree (the log was shortened): its 409 is beyond the
    checkpoint. Level: it cosigned another tree of the same size, and the retry from there is 422."""
    consultant = make.consultant()
    make.client(consultant, logged)
    make.endpoint(consultant, "http://127.0.0.1:9/hooks", events=("evidence.fork_detected",))
    witness = start_witness("witness.test/w1")
    added = add(client, logged, witness)
    origin = signer_for(runtime.settings).note_origin(logged.organization_id)
    size = client.get("/api/evidence/verify", headers=logged.headers).json()["head"]["seq"]
    witness.witness.add_checkpoint(f"old 0\n\n{_sign_other_log(runtime, origin, size + ahead)}".encode())

    # The export that meets the fork signs nothing; its transaction, the alarm with it, is rolled back.
    refused = client.post("/api/evidence/export", json={}, headers=logged.headers)
    assert refused.status_code == 409 and refused.json()["code"] == "evidence_inconsistent"
    assert refused.json()["details"]["witness"] == {"id": added["id"], "name": "Auditor", "size": size + ahead}
    assert fork_events(db) == []
    # The worker's round meets the same refusal and raises the alarm.
    assert checkpoints.record_due(db, signer_for(runtime.settings)) == 1
    assert witnessing.submit_due(runtime.session_factory, LOOPBACK) == 0
    [alarm] = fork_events(db)
    assert alarm["witness"] == {"id": added["id"], "name": "Auditor", "size": size + ahead}
    assert alarm["checkpoint"]["treeSize"] == size
    listed = client.get("/api/evidence/witnesses", headers=logged.headers).json()["data"]
    assert listed[0]["forkDetectedAt"] is not None
    verified = client.get("/api/evidence/verify", headers=logged.headers).json()
    assert verified["checkpointsConsistent"] is False and verified["firstInconsistentCheckpoint"] is None
    assert verified["witnessFork"] == {
        "witnessId": added["id"],
        "name": "Auditor",
        "size": size + ahead,
        "detectedAt": listed[0]["forkDetectedAt"],
    }

    # Kindling signs nothing more of the log: no export, no report, no checkpoint.
    blocked = client.post("/api/evidence/export", json={}, headers=logged.headers)
    assert blocked.status_code == 409 and blocked.json()["code"] == "evidence_inconsistent"
    assert blocked.json()["details"]["witness"]["id"] == added["id"]
    report = {"framework": "gri", "format": "json", "period": "month"}
    assert client.post("/api/compliance/export", json=report, headers=logged.headers).status_code == 409
    make.activity.act(logged)
    assert checkpoints.record_due(db, signer_for(runtime.settings)) == 0
    # Removing the witness is the admin's decision that resumes signing.
    client.delete(f"/api/evidence/witnesses/{added['id']}", headers=logged.headers)
    assert client.post("/api/evidence/export", json={}, headers=logged.headers).status_code == 200
    verified = client.get("/api/evidence/verify", headers=logged.headers).json()
    assert verified["checkpointsConsistent"] is True and verified["witnessFork"] is None


def test_a_compliance_export_that_fails_after_publishing_leaves_no_witness_a_false_fork(
    client, db, logged, make, runtime, start_witness, loopback, monkeypatch
):
    """The wellbeing week a compliance export publishes is its own until it commits: an export that
    then fails must not have shown a witness a tree its rollback undid."""
    witness = start_witness("witness.test/w1")
    add(client, logged, witness)
    export(client, logged)
    for _ in range(wellbeing.MINIMUM_GROUP_SIZE):
        make.activity.response(make.member(logged), days_ago=8)
    body = {"framework": "gri", "format": "json", "period": "month"}

    def fail(*_args, **_kwargs):
        raise RuntimeError("the report failed after its checkpoint")

    with monkeypatch.context() as patched:
        patched.setattr(exports, "build_report", fail)
        assert client.post("/api/compliance/export", json=body, headers=logged.headers).status_code == 500
    # The week is published again, with events of other hashes, and this time committed.
    exported = client.post("/api/compliance/export", json=body, headers=logged.headers)
    assert exported.status_code == 200, exported.text
    assert exported.json()["data"]["evidenceWitnessed"] is False
    assert witnessing.submit_due(runtime.session_factory, LOOPBACK) == 1
    assert fork_events(db) == []
    assert client.post("/api/compliance/export", json=body, headers=logged.headers).json()["data"]["evidenceWitnessed"]


def test_the_worker_submits_each_new_checkpoint(client, db, logged, make, runtime, start_witness, loopback):
    witness = start_witness("witness.test/w1")
    add(client, logged, witness)
    assert checkpoints.record_due(db, signer_for(runtime.settings)) == 1
    db.flush()
    assert witnessing.submit_due(runtime.session_factory, LOOPBACK) == 1
    make.activity.act(logged)
    checkpoints.record_due(db, signer_for(runtime.settings))
    assert witnessing.submit_due(runtime.session_factory, LOOPBACK) == 1
    # Nothing new: nothing sent.
    assert witnessing.submit_due(runtime.session_factory, LOOPBACK) == 0
    [latest, earlier] = client.get("/api/evidence/checkpoints", headers=logged.headers).json()["data"]
    assert len(latest["cosignatures"]) == len(earlier["cosignatures"]) == 1
    assert (
        witness.witness.state.latest(signer_for(runtime.settings).note_origin(logged.organization_id))[0]
        == latest["treeSize"]
    )


def test_a_witness_that_never_answers_is_waited_for_five_seconds_at_most(client, logged, make, loopback):
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)  # accepts connections and never answers
    try:
        vkey = cosignatures.vkey("witness.test/silent", Ed25519PrivateKey.generate().public_key().public_bytes_raw())
        response = client.post(
            "/api/evidence/witnesses",
            json={"name": "Silent", "url": f"http://127.0.0.1:{silent.getsockname()[1]}", "verifierKey": vkey},
            headers=logged.headers,
        )
        assert response.status_code == 201
        started = time.monotonic()
        assert export(client, logged)["checkpoint"]["witnessed"] is False
        assert time.monotonic() - started < witnessing.QUORUM_WAIT_SECONDS + 3
    finally:
        silent.close()


def test_offline_verification_counts_the_given_witnesses_cosignatures(
    tmp_path, capsys, client, logged, runtime, start_witness, loopback
):
    first, second = start_witness("witness.test/w1"), start_witness("witness.test/w2")
    add(client, logged, first, "One")
    add(client, logged, second, "Two")
    absent = cosignatures.vkey("witness.test/w3", Ed25519PrivateKey.generate().public_key().public_bytes_raw())
    bundle = export(client, logged)

    code, said = verify_offline_with_key(
        tmp_path, capsys, client, bundle, "--witness", first.vkey, "--witness", second.vkey
    )
    assert code == 0 and "cosigned by 2 of 2 witnesses (witness.test/w1, witness.test/w2), quorum 2" in said
    # Every witness given must cosign, unless --quorum says fewer.
    three = ("--witness", first.vkey, "--witness", second.vkey, "--witness", absent)
    code, said = verify_offline_with_key(tmp_path, capsys, client, bundle, *three)
    assert code == 1 and "cosigned by 2 of the 3 witnesses given, fewer than the quorum of 3" in said
    assert verify_offline_with_key(tmp_path, capsys, client, bundle, *three, "--quorum", "2")[0] == 0
    assert verify_offline_with_key(tmp_path, capsys, client, bundle, *three, "--quorum", "4")[0] == 2
    assert verify_offline_with_key(tmp_path, capsys, client, bundle, "--witness", "not-a-vkey")[0] == 2

    # A cosignature changed by one bit no longer counts; the log's own signature still verifies.
    text, lines = notes.split(bundle["checkpoint"]["note"])
    name, key_id, signature = lines[1]
    flipped = signature[:-1] + bytes([signature[-1] ^ 1])
    tampered = (
        text
        + "\n"
        + "".join(
            notes.DASH + f"{n} {base64.b64encode(i + s).decode()}\n"
            for n, i, s in (lines[0], (name, key_id, flipped), *lines[2:])
        )
    )
    resigned = {**bundle, "checkpoint": {**bundle["checkpoint"], "note": tampered}}
    # The bundle's own signature covers the note: re-sign it, as whoever holds the key could.
    del resigned["signature"]
    resigned["signature"] = {
        "keyId": bundle["signature"]["keyId"],
        "algorithm": "Ed25519",
        "value": signer_for(runtime.settings).sign(signed_bytes(resigned)),
    }
    code, said = verify_offline_with_key(
        tmp_path, capsys, client, resigned, "--witness", first.vkey, "--witness", second.vkey
    )
    assert code == 1 and "cosigned by 1 of the 2 witnesses given" in said


def test_a_compliance_export_states_whether_its_checkpoint_is_witnessed(client, logged, start_witness, loopback):
    body = {"framework": "gri", "format": "json", "period": "month"}
    unwitnessed = client.post("/api/compliance/export", json=body, headers=logged.headers)
    assert unwitnessed.status_code == 200, unwitnessed.text
    assert unwitnessed.headers["Kindling-Evidence-Witnessed"] == "false"
    assert unwitnessed.json()["data"]["evidenceWitnessed"] is False
    add(client, logged, start_witness("witness.test/w1"))
    exported = client.post("/api/compliance/export", json=body, headers=logged.headers)
    assert exported.headers["Kindling-Evidence-Witnessed"] == "true"
    assert exported.json()["data"]["evidenceWitnessed"] is True
    [latest, *_] = client.get("/api/evidence/checkpoints", headers=logged.headers).json()["data"]
    assert exported.json()["data"]["evidenceHead"]["seq"] == latest["treeSize"] and latest["cosignatures"]
