"""The evidence log as a client sees it: bundles exported over HTTP, the server's check of its
records, and `kindling evidence verify` run offline on what was exported (docs/evidence.md)."""

from __future__ import annotations

import base64
import json

from kindling import cli
from kindling.evidence.chain import export_statement, json_digested
from kindling.evidence.signing import signer_for

# A second key, as after a rotation (a fixed test seed, never used anywhere else).
ROTATED_SEED = base64.b64encode(bytes(range(32))).decode()


def export(client, admin, **body) -> dict:
    """The signed bundle POST /api/evidence/export answers (`body` selects; none: the whole log)."""
    response = client.post("/api/evidence/export", json=body, headers=admin.headers)
    assert response.status_code == 200, response.text
    return response.json()


def public_key(client) -> str:
    """The server's current signing key, as GET /api/evidence/keys lists it first."""
    return client.get("/api/evidence/keys").json()["data"][0]["publicKey"]


def verify(client, admin) -> dict:
    """The server's own check of the organization's log and records: GET /api/evidence/verify."""
    response = client.get("/api/evidence/verify", headers=admin.headers)
    assert response.status_code == 200, response.text
    return response.json()


def only_mismatch(client, admin) -> dict:
    """The one record the server's check finds at odds with an intact log."""
    result = verify(client, admin)
    assert result["intact"] is True and result["consistent"] is False
    assert result["mismatchCount"] == 1
    [mismatch] = result["mismatches"]
    return mismatch


def refused(client, admin) -> None:
    """Reports and both kinds of export are refused 409 evidence_inconsistent."""
    for response in (
        client.get("/api/compliance/gri", headers=admin.headers),
        client.post("/api/compliance/export", json={"framework": "gri", "format": "json"}, headers=admin.headers),
        client.post("/api/evidence/export", json={}, headers=admin.headers),
    ):
        assert response.status_code == 409, response.text
        assert response.json()["code"] == "evidence_inconsistent"


def verify_offline(tmp_path, capsys, bundle: dict | str, *arguments: str) -> tuple[int, str]:
    """`kindling evidence verify` of the bundle (or of its text, as given) with `arguments`: the exit
    code and everything it printed."""
    path = tmp_path / "bundle.json"
    path.write_text(bundle if isinstance(bundle, str) else json.dumps(bundle))
    code = cli.main(["evidence", "verify", str(path), *arguments])
    captured = capsys.readouterr()
    return code, (captured.out + captured.err).strip()


def verify_offline_with_key(tmp_path, capsys, client, bundle: dict | str, *arguments: str) -> tuple[int, str]:
    """`verify_offline` against the server's current public key."""
    return verify_offline(tmp_path, capsys, bundle, "--public-key", public_key(client), *arguments)


def check_report(tmp_path, capsys, client, bundle: dict, report: dict) -> tuple[int, str]:
    """`kindling evidence verify BUNDLE --report REPORT`: every figure of the report recomputed from the log."""
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report))
    return verify_offline_with_key(tmp_path, capsys, client, bundle, "--report", str(path))


def resigned(runtime, report: dict, signer=None) -> dict:
    """The report signed again as it now stands, as Kindling would sign a figure its tables gave it."""
    signer = signer or signer_for(runtime.settings)
    data = report["data"]
    statement = export_statement(
        organization_id=data["organizationId"],
        framework=data["framework"],
        period=data["period"],
        file_format="json",
        head=data["evidenceHead"],
        body=json_digested(report),
    )
    return {"data": data, "signature": signer.sign_statement(statement)}


def events_of(client, admin, **params) -> list[dict]:
    """The organization's evidence events, as GET /api/evidence lists them under `params`."""
    response = client.get("/api/evidence", params={"limit": 1000, **params}, headers=admin.headers)
    assert response.status_code == 200, response.text
    return response.json()["data"]
