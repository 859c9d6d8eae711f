"""Signed checkpoints as C2SP notes: made at every export and within a minute while a log grows,
listed, sent to witnesses, never signed over a log that does not extend the last one, and checked
offline by `kindling evidence verify --checkpoint`."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json
import urllib.parse

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from sqlalchemy import insert, select, text

from kindling.evidence import checkpoints, merkle, notes, tree
from kindling.evidence import log as evidence
from kindling.evidence.chain import event_hash, timestamp
from kindling.evidence.keys import Signer
from kindling.evidence.models import EvidenceCheckpoint, EvidenceTreeNode
from kindling.evidence.signing import signer_for
from kindling.outbox.models import WebhookEvent
from tests.helpers import rfc9162
from tests.helpers.evidence import export, public_key, verify_offline_with_key


def listed(client, admin) -> list[dict]:
    response = client.get("/api/evidence/checkpoints", headers=admin.headers)
    assert response.status_code == 200, response.text
    return response.json()["data"]


def run(tmp_path, capsys, client, bundle: dict, checkpoint: dict | str, *extra: str) -> tuple[int, str]:
    """`kindling evidence verify` of the bundle against a checkpoint: a note (text) or the JSON form."""
    given = tmp_path / "checkpoint"
    given.write_text(checkpoint if isinstance(checkpoint, str) else json.dumps(checkpoint))
    return verify_offline_with_key(tmp_path, capsys, client, bundle, "--checkpoint", str(given), *extra)


def read_note(note: str, key: bytes) -> tuple[str, int, bytes]:
    """The note read as c2sp.org/signed-note and tlog-checkpoint say, with nothing of Kindling's:
    its origin, size and root, once its one signature line verifies."""
    text_, signatures = note.split("\n\n")
    text_ += "\n"
    [line] = signatures.splitlines()
    dash, name, value = line.split(" ")
    assert dash == "\u2014"
    raw = base64.b64decode(value, validate=True)
    assert raw[:4] == hashlib.sha256(name.encode() + b"\n\x01" + key).digest()[:4]
    Ed25519PublicKey.from_public_bytes(key).verify(raw[4:], text_.encode())
    origin, size, root = text_.splitlines()
    assert origin == name
    return origin, int(size), base64.b64decode(root, validate=True)


def test_every_export_is_checkpointed_as_a_signed_note(client, logged, runtime):
    bundle = export(client, logged)
    [checkpoint] = listed(client, logged)
    assert (checkpoint["seq"], checkpoint["hash"]) == (bundle["head"]["seq"], bundle["head"]["hash"])
    assert checkpoint["organizationId"] == logged.organization_id and checkpoint["signature"]["algorithm"] == "Ed25519"
    origin, size, root = read_note(checkpoint["note"], base64.b64decode(public_key(client)))
    assert origin == f"{urllib.parse.urlsplit(runtime.settings.public_url).netloc}/evidence/{logged.organization_id}"
    assert size == checkpoint["treeSize"] == bundle["head"]["seq"] == len(bundle["events"])
    assert checkpoint["cosignatures"] == []
    assert root == rfc9162.mth(rfc9162.event_leaves(bundle["events"])) == base64.b64decode(checkpoint["rootHash"])
    assert bundle["checkpoint"] == {**{k: checkpoint[k] for k in ("note", "treeSize", "rootHash")}, "witnessed": False}
    export(client, logged)  # the same head: the same checkpoint
    response = client.post("/api/compliance/export", json={"framework": "gri", "format": "csv"}, headers=logged.headers)
    assert response.status_code == 200
    assert len(listed(client, logged)) == 1


def test_the_origin_is_the_host_of_the_public_url(runtime):
    signer = Signer(signer_for(runtime.settings).private_key, public_url="https://Evidence.Example.com:8443/app")
    assert signer.note_origin("abc") == "evidence.example.com:8443/evidence/abc"
    assert Signer(signer_for(runtime.settings).private_key).note_origin("abc") == "kindling.local/evidence/abc"
    note = signer.sign_note(notes.checkpoint_text("evidence.example.com:8443/evidence/abc", 3, bytes(32)), "x.y/z")
    assert note.endswith("\n") and "\n\n\u2014 x.y/z " in note


def test_a_later_bundle_extends_the_older_note(client, logged, make, tmp_path, capsys):
    export(client, logged)
    [older] = listed(client, logged)
    make.activity.act(logged)
    later = export(client, logged)
    code, output = run(tmp_path, capsys, client, later, older["note"])
    grown = f"tree of {older['treeSize'] + 1} leaves"
    assert code == 0 and "checkpoint verified" in output and grown in output, output
    code, output = run(tmp_path, capsys, client, later, older)  # the listing's JSON: its note is checked
    assert code == 0, output
    legacy = {k: older[k] for k in ("organizationId", "seq", "hash", "at", "signature")}
    code, output = run(tmp_path, capsys, client, later, legacy)  # the JSON form of before
    assert code == 0, output
    forged = dict(legacy, hash="f" * 64)
    code, output = run(tmp_path, capsys, client, later, forged)
    assert code == 1 and "signature does not verify" in output  # a checkpoint cannot be forged either


def test_a_bundle_whose_tree_is_not_its_notes_is_refused(client, logged, tmp_path, capsys):
    bundle = export(client, logged)
    other = dict(bundle, checkpoint=dict(bundle["checkpoint"], rootHash=rfc9162.b64(bytes(32))))
    code, output = verify_offline_with_key(tmp_path, capsys, client, other)
    # The bundle's own signature covers `checkpoint`: whoever edits it must sign again.
    assert code == 1 and "signature does not verify" in output


def logged_size(db, admin) -> int:
    """How many events the organization's log holds now (the fixture's, joinings included)."""
    last = evidence.last_event(db, organization_id=admin.organization_id)
    assert last is not None
    return last["seq"]


def shorten(tamper, organization_id: str, seq: int) -> None:
    """Remove the last act and its event and set the head row back, as someone who can write the
    database could (on PostgreSQL as a superuser, triggers off): the chain verifies and reconciles
    again."""
    org = {"org": organization_id, "seq": seq}
    tamper("DELETE FROM kindness_tallies WHERE organization_id = :org", **org)
    tamper(
        "DELETE FROM kindness_acts WHERE id = "
        "(SELECT subject_id FROM evidence_events WHERE organization_id = :org AND seq = :seq)",
        **org,
    )
    tamper("DELETE FROM evidence_tree_nodes WHERE organization_id = :org AND position >= 0", **org)
    tamper("DELETE FROM evidence_events WHERE organization_id = :org AND seq = :seq", **org)
    tamper(
        "UPDATE evidence_heads SET seq = :seq - 1, hash = "
        "(SELECT hash FROM evidence_events WHERE organization_id = :org AND seq = :seq - 1) WHERE organization_id = :org",
        **org,
    )


def rebuild_tree(db, tamper, organization_id: str) -> None:
    """The node table rebuilt from the events as they now are (it was emptied before), and the
    head row's frontier with it."""
    hashes = db.scalars(
        text("SELECT hash FROM evidence_events WHERE organization_id = :org ORDER BY seq"), {"org": organization_id}
    ).all()
    frontier = merkle.Frontier()
    nodes = [row for hash_ in hashes for row in tree.grow(frontier, organization_id=organization_id, hash_=hash_)]
    db.execute(insert(EvidenceTreeNode), nodes)
    tamper(
        "UPDATE evidence_heads SET frontier = :frontier WHERE organization_id = :org",
        frontier=frontier.packed(),
        org=organization_id,
    )


def rewrite(db, tamper, organization_id: str) -> None:
    """Every event backdated by a second and the whole chain hashed again, its tree rebuilt: the log
    verifies and reconciles, and only a checkpoint of before tells."""
    events, _ = evidence.list_events(db, organization_id=organization_id, limit=1000)
    prev_hash = "0" * 64
    tamper("DELETE FROM evidence_tree_nodes WHERE organization_id = :org AND position >= 0", org=organization_id)
    for event in events:
        moved = dt.datetime.fromisoformat(event["occurredAt"]) - dt.timedelta(seconds=1)
        event = dict(event, occurredAt=timestamp(moved), prevHash=prev_hash)
        prev_hash = event_hash(event)
        tamper(
            "UPDATE evidence_events SET occurred_at = :at, prev_hash = :prev, hash = :hash "
            "WHERE organization_id = :org AND seq = :seq",
            at=moved,
            prev=event["prevHash"],
            hash=prev_hash,
            org=organization_id,
            seq=event["seq"],
        )
    tamper("UPDATE evidence_heads SET hash = :hash WHERE organization_id = :org", hash=prev_hash, org=organization_id)
    rebuild_tree(db, tamper, organization_id)


def assert_refused(client, admin, checkpoint: dict) -> None:
    verified = client.get("/api/evidence/verify", headers=admin.headers).json()
    assert verified["intact"] and verified["consistent"], verified  # the chain alone says nothing
    assert verified["checkpointsConsistent"] is False
    assert verified["firstInconsistentCheckpoint"] == {
        "treeSize": checkpoint["treeSize"],
        "rootHash": checkpoint["rootHash"],
        "at": checkpoint["at"],
    }
    for path, body in (
        ("/api/evidence/export", {}),
        ("/api/compliance/export", {"framework": "gri", "format": "json"}),
    ):
        response = client.post(path, json=body, headers=admin.headers)
        assert response.status_code == 409 and response.json()["code"] == "evidence_inconsistent", response.text
    assert client.get("/api/compliance/gri", headers=admin.headers).status_code == 409


def fork_alarms(db, consultant_id: str) -> list[dict]:
    found = db.scalars(
        select(WebhookEvent.body).where(
            WebhookEvent.consultant_id == consultant_id, WebhookEvent.type == "evidence.fork_detected"
        )
    ).all()
    return [json.loads(body) for body in found]


def test_a_shortened_log_is_refused_and_raises_the_fork_alarm(client, db, logged, make, runtime, tamper):
    consultant = make.consultant()
    make.client(consultant, logged)
    make.endpoint(consultant, "http://127.0.0.1:9/hooks", events=("evidence.fork_detected",))
    size = logged_size(db, logged)
    make.activity.act(logged)
    export(client, logged)
    [checkpoint] = listed(client, logged)
    assert checkpoint["treeSize"] == size + 1
    shorten(tamper, logged.organization_id, size + 1)
    rebuild_tree(db, tamper, logged.organization_id)
    assert_refused(client, logged, checkpoint)
    # The worker's round finds it, signs nothing and raises the alarm, once. (A round covers every
    # organization: others the database holds may get theirs.)
    checkpoints.record_due(db, signer_for(runtime.settings))
    checkpoints.record_due(db, signer_for(runtime.settings))
    [alarm] = fork_alarms(db, consultant.user.id)
    assert alarm["data"]["checkpoint"] == listed(client, logged)[0] and alarm["data"]["treeSize"] == size
    # The log growing again past the checkpoint does not mend it: still no signature.
    make.activity.act(logged)
    checkpoints.record_due(db, signer_for(runtime.settings))
    assert len(listed(client, logged)) == 1 and len(fork_alarms(db, consultant.user.id)) == 1


def test_a_shortened_log_with_its_checkpoints_gone_is_caught_offline(
    client, db, logged, make, tamper, tmp_path, capsys
):
    size = logged_size(db, logged)
    make.activity.act(logged)
    export(client, logged)
    [older] = listed(client, logged)
    shorten(tamper, logged.organization_id, size + 1)
    rebuild_tree(db, tamper, logged.organization_id)
    tamper("DELETE FROM evidence_checkpoints WHERE organization_id = :org", org=logged.organization_id)
    shortened = export(client, logged)  # nothing left inside Kindling remembers
    assert verify_offline_with_key(tmp_path, capsys, client, shortened)[0] == 0
    code, output = run(tmp_path, capsys, client, shortened, older["note"])
    assert code == 1 and f"fewer than the checkpoint's {size + 1}: the log was shortened" in output, output


def test_a_rewritten_and_resigned_log_is_refused(client, db, logged, runtime, tamper):
    export(client, logged)
    [checkpoint] = listed(client, logged)
    rewrite(db, tamper, logged.organization_id)
    assert_refused(client, logged, checkpoint)
    checkpoints.record_due(db, signer_for(runtime.settings))
    assert len(listed(client, logged)) == 1
    stored = db.scalar(select(EvidenceCheckpoint).where(EvidenceCheckpoint.organization_id == logged.organization_id))
    assert stored is not None and stored.fork_detected_at is not None


def test_a_rewritten_log_with_its_checkpoints_gone_is_caught_offline(client, db, logged, tamper, tmp_path, capsys):
    """In embedded mode the key sits beside the database: the rewritten log is signed with it."""
    export(client, logged)
    [older] = listed(client, logged)
    rewrite(db, tamper, logged.organization_id)
    tamper("DELETE FROM evidence_checkpoints WHERE organization_id = :org", org=logged.organization_id)
    forged = export(client, logged)
    assert verify_offline_with_key(tmp_path, capsys, client, forged)[0] == 0
    assert forged["checkpoint"]["rootHash"] != older["rootHash"]
    code, output = run(tmp_path, capsys, client, forged, older["note"])
    assert code == 1 and "does not have the checkpoint's root: the log was rewritten" in output, output


def test_an_excerpt_is_checked_against_its_tree_and_older_notes(client, db, logged, make, tmp_path, capsys):
    size = logged_size(db, logged)
    export(client, logged)
    [older] = listed(client, logged)  # `size` leaves
    for _ in range(4):
        make.activity.act(logged)
    events, _ = evidence.list_events(db, organization_id=logged.organization_id)
    # The second and third acts after the note.
    excerpt = export(client, logged, **{"from": events[size + 1]["occurredAt"], "to": events[size + 2]["occurredAt"]})
    assert [e["seq"] for e in excerpt["events"]] == [size + 2, size + 3]
    assert excerpt["checkpoint"]["treeSize"] == size + 4
    code, output = verify_offline_with_key(tmp_path, capsys, client, excerpt)
    assert code == 0 and f"tree of {size + 4} leaves" in output, output
    # Prefix and proof tie the excerpt to the tree: another prefix does not.
    bad = json.loads(json.dumps(excerpt))
    bad["checkpoint"]["prefix"][0] = rfc9162.b64(bytes(32))
    assert verify_offline_with_key(tmp_path, capsys, client, bad)[0] == 1
    # The older note lies before the excerpt: a consistency proof from its size to the excerpt's shows it.
    code, output = run(tmp_path, capsys, client, excerpt, older["note"])
    assert code == 1 and "give --proof" in output
    proof = client.get(f"/api/evidence/proofs/consistency?from={size}&to={size + 4}", headers=logged.headers).json()
    (tmp_path / "proof.json").write_text(json.dumps(proof))
    code, output = run(tmp_path, capsys, client, excerpt, older["note"], "--proof", str(tmp_path / "proof.json"))
    assert code == 0 and "checkpoint verified" in output, output
    proof["proof"][0] = rfc9162.b64(bytes(32))
    (tmp_path / "proof.json").write_text(json.dumps(proof))
    code, output = run(tmp_path, capsys, client, excerpt, older["note"], "--proof", str(tmp_path / "proof.json"))
    assert code == 1 and "does not extend" in output


def test_checkpoints_are_made_while_the_log_grows(db, logged, runtime, make):
    def made() -> list[int]:
        return sorted(
            db.scalars(
                select(EvidenceCheckpoint.seq).where(EvidenceCheckpoint.organization_id == logged.organization_id)
            ).all()
        )

    size = logged_size(db, logged)
    assert checkpoints.record_due(db, signer_for(runtime.settings)) >= 1
    assert made() == [size]
    make.activity.act(logged)
    # The next round (every 30 s) covers the new event: no hour to wait.
    checkpoints.record_due(db, signer_for(runtime.settings))
    assert made() == [size, size + 1]
    # A log that does not grow gets no more.
    checkpoints.record_due(db, signer_for(runtime.settings))
    assert made() == [size, size + 1]


def test_witnesses_receive_each_checkpoint_as_an_outbound_event(client, db, make, logged):
    consultant = make.consultant()
    make.client(consultant, logged)
    make.endpoint(consultant, "http://127.0.0.1:9/hooks", events=("evidence.checkpoint",))
    export(client, logged)
    [event] = db.scalars(select(WebhookEvent).where(WebhookEvent.consultant_id == consultant.user.id)).all()
    body = json.loads(event.body)
    assert body["type"] == "evidence.checkpoint" and body["data"] == listed(client, logged)[0]


def test_only_admins_list_checkpoints(client, make):
    admin = make.admin()
    assert client.get("/api/evidence/checkpoints").status_code == 401
    assert client.get("/api/evidence/checkpoints", headers=make.member(admin).headers).status_code == 403
