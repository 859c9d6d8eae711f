"""Signed checkpoints: made at every export and hourly while a log grows, listed, sent to witnesses,
and checked by `kindling evidence verify --checkpoint`."""

from __future__ import annotations

import datetime as dt
import json

from sqlalchemy import select, text

from kindling import cli
from kindling.evidence import checkpoints
from kindling.evidence.models import EvidenceCheckpoint
from kindling.platform.base import utcnow
from kindling.webhooks.models import WebhookEvent


def export(client, admin, **body) -> dict:
    response = client.post("/api/evidence/export", json=body, headers=admin.headers)
    assert response.status_code == 200, response.text
    return response.json()


def listed(client, admin) -> list[dict]:
    response = client.get("/api/evidence/checkpoints", headers=admin.headers)
    assert response.status_code == 200, response.text
    return response.json()["data"]


def run(tmp_path, capsys, client, bundle: dict, checkpoint: dict) -> tuple[int, str]:
    (tmp_path / "bundle.json").write_text(json.dumps(bundle))
    (tmp_path / "cp.json").write_text(json.dumps(checkpoint))
    key = client.get("/api/evidence/keys").json()["data"][0]["publicKey"]
    code = cli.main(
        [
            "evidence",
            "verify",
            str(tmp_path / "bundle.json"),
            "--public-key",
            key,
            "--checkpoint",
            str(tmp_path / "cp.json"),
        ]
    )
    captured = capsys.readouterr()
    return code, (captured.out + captured.err).strip()


def test_every_export_is_checkpointed_and_listed(client, logged):
    bundle = export(client, logged)
    [checkpoint] = listed(client, logged)
    assert (checkpoint["seq"], checkpoint["hash"]) == (bundle["head"]["seq"], bundle["head"]["hash"])
    assert checkpoint["organizationId"] == logged.organization_id and checkpoint["signature"]["algorithm"] == "Ed25519"
    export(client, logged)  # the same head: the same checkpoint
    response = client.post("/api/compliance/export", json={"framework": "gri", "format": "csv"}, headers=logged.headers)
    assert response.status_code == 200
    assert len(listed(client, logged)) == 1


def test_a_later_bundle_holds_the_checkpointed_head(client, logged, make, tmp_path, capsys):
    export(client, logged)
    [checkpoint] = listed(client, logged)
    make.activity.act(logged)
    code, output = run(tmp_path, capsys, client, export(client, logged), checkpoint)
    assert code == 0 and "checkpoint verified" in output


def test_a_shortened_log_is_caught(client, logged, make, tmp_path, capsys, tamper):
    make.activity.act(logged)
    export(client, logged)
    checkpoint = listed(client, logged)[0]
    assert checkpoint["seq"] == 8
    # The last act and its event removed and the head row set back, as someone who can write the
    # database could: the log verifies and reconciles again, and the server signs it.
    org = {"org": logged.organization_id}
    tamper("DELETE FROM kindness_tallies WHERE organization_id = :org", **org)
    tamper(
        "DELETE FROM kindness_acts WHERE id = (SELECT subject_id FROM evidence_events WHERE organization_id = :org AND seq = 8)",
        **org,
    )
    tamper("DELETE FROM evidence_events WHERE organization_id = :org AND seq = 8", **org)
    tamper(
        "UPDATE evidence_heads SET seq = 7, hash = (SELECT hash FROM evidence_events WHERE organization_id = :org AND seq = 7) "
        "WHERE organization_id = :org",
        **org,
    )
    shortened = export(client, logged)
    assert shortened["head"]["seq"] == 7
    code, output = run(tmp_path, capsys, client, shortened, checkpoint)
    assert code == 1 and "before the checkpoint's seq 8: the log was shortened" in output


def test_a_rewritten_log_is_caught(client, logged, tmp_path, capsys):
    export(client, logged)
    checkpoint = listed(client, logged)[0]
    forged = dict(checkpoint, hash="f" * 64)
    code, output = run(tmp_path, capsys, client, export(client, logged), forged)
    assert code == 1 and "signature does not verify" in output  # a checkpoint cannot be forged either
    bundle = export(client, logged)
    bundle["events"][-1]["data"]["requestedLevel"] = 5
    code, output = run(tmp_path, capsys, client, bundle, checkpoint)
    assert code == 1 and "chain broken at seq 7" in output


def test_checkpoints_are_made_hourly_while_the_log_grows(db, logged, runtime, make):
    now = utcnow()
    assert checkpoints.record_due(db, runtime.signer, now=now) >= 1
    first = db.scalars(
        select(EvidenceCheckpoint).where(EvidenceCheckpoint.organization_id == logged.organization_id)
    ).all()
    assert [c.seq for c in first] == [7]
    make.activity.act(logged)
    checkpoints.record_due(db, runtime.signer, now=now + dt.timedelta(minutes=59))
    assert (
        db.scalar(
            text("SELECT count(*) FROM evidence_checkpoints WHERE organization_id = :org"),
            {"org": logged.organization_id},
        )
        == 1
    )
    checkpoints.record_due(db, runtime.signer, now=now + dt.timedelta(minutes=61))
    seqs = db.scalars(
        select(EvidenceCheckpoint.seq).where(EvidenceCheckpoint.organization_id == logged.organization_id)
    ).all()
    assert sorted(seqs) == [7, 8]
    # A log that does not grow gets no more.
    checkpoints.record_due(db, runtime.signer, now=now + dt.timedelta(hours=3))
    assert (
        db.scalar(
            text("SELECT count(*) FROM evidence_checkpoints WHERE organization_id = :org"),
            {"org": logged.organization_id},
        )
        == 2
    )


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
