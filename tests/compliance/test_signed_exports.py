"""Every compliance export states the evidence head it was computed at and is signed over its bytes."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import re
import types

import pypdf
import pytest
import rfc8785
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from kindling.accounts import service as accounts
from kindling.compliance import exports
from kindling.evidence.signing import signer_for
from tests.helpers.compliance import export

SIGNATURE = re.compile(
    r"keyId=(?P<key_id>[0-9a-f]{16}), algorithm=Ed25519, organizationId=(?P<organization_id>[0-9a-f-]{36}), "
    r"framework=(?P<framework>[a-z-]+), period=(?P<period>[a-z]+), format=(?P<format>[a-z]+), "
    r"evidenceHead=(?P<seq>[0-9]+):(?P<hash>[0-9a-f]{64}), digest=sha256:(?P<digest>[0-9a-f]{64}), value=(?P<value>\S+)"
)


def digest(file_format: str, body: bytes) -> str:
    """The digest of an export as docs/evidence.md defines it: of a CSV's or PDF's exact bytes, of
    the canonical JSON of a JSON body without its `signature`."""
    if file_format == "json":
        document = json.loads(body)
        document.pop("signature", None)
        body = rfc8785.dumps(document)
    return hashlib.sha256(body).hexdigest()


def statement(match, body: bytes) -> bytes:
    """The canonical JSON the signature is over, rebuilt from the header's members and the body received."""
    return rfc8785.dumps(
        {
            "organizationId": match["organization_id"],
            "framework": match["framework"],
            "period": match["period"],
            "format": match["format"],
            "evidenceHead": {"seq": int(match["seq"]), "hash": match["hash"]},
            "digest": digest(match["format"], body),
        }
    )


def exported_file(client, account, file_format: str):
    """The GRI report in `file_format`, as the export answers it."""
    response = export(client, account, framework="gri", format=file_format)
    assert response.status_code == 200, response.text
    return response


def check_signature(client, response) -> str:
    """The signing key's id, once the signature has verified over the exact body received."""
    match = SIGNATURE.fullmatch(response.headers["kindling-signature"])
    assert match is not None, response.headers["kindling-signature"]
    assert match["digest"] == digest(match["format"], response.content)
    assert response.headers["kindling-evidence-head"] == f"{match['seq']}:{match['hash']}"
    keys = {key["keyId"]: key["publicKey"] for key in client.get("/api/evidence/keys").json()["data"]}
    public_key = Ed25519PublicKey.from_public_bytes(base64.b64decode(keys[match["key_id"]]))
    public_key.verify(
        base64.b64decode(match["value"]), statement(match, response.content)
    )  # raises InvalidSignature when it does not
    return match["key_id"]


@pytest.mark.parametrize("file_format", ["csv", "json", "pdf"])
def test_exports_carry_the_head_and_a_signature_over_their_bytes(client, busy, file_format):
    response = exported_file(client, busy, file_format)
    head = client.get("/api/evidence/verify", headers=busy.headers).json()["head"]
    # Its 3 people joining, the busy month's 4 acts and the 3 decisions that verified them, 3
    # check-ins and their check-outs, 4 donations and the payment events that settled 3 of them.
    assert head["seq"] == 23
    assert response.headers["kindling-evidence-head"] == f"{head['seq']}:{head['hash']}"
    check_signature(client, response)


def test_a_changed_byte_no_longer_verifies(client, busy):
    from cryptography.exceptions import InvalidSignature

    response = exported_file(client, busy, "csv")
    match = SIGNATURE.fullmatch(response.headers["kindling-signature"])
    public_key = Ed25519PublicKey.from_public_bytes(
        base64.b64decode(client.get("/api/evidence/keys").json()["data"][0]["publicKey"])
    )
    with pytest.raises(InvalidSignature):
        public_key.verify(
            base64.b64decode(match["value"]), statement(match, response.content.replace(b"gri", b"grj", 1))
        )


def test_the_signature_covers_the_head(client, busy):
    """A CSV's head swapped for an older one, in the header, no longer verifies."""
    from cryptography.exceptions import InvalidSignature

    response = exported_file(client, busy, "csv")
    match = SIGNATURE.fullmatch(response.headers["kindling-signature"])
    public_key = Ed25519PublicKey.from_public_bytes(
        base64.b64decode(client.get("/api/evidence/keys").json()["data"][0]["publicKey"])
    )
    older = client.get("/api/evidence", params={"limit": 3}, headers=busy.headers).json()["data"][-1]
    swapped = SIGNATURE.fullmatch(
        response.headers["kindling-signature"].replace(
            f"{match['seq']}:{match['hash']}", f"{older['seq']}:{older['hash']}"
        )
    )
    public_key.verify(base64.b64decode(match["value"]), statement(match, response.content))
    with pytest.raises(InvalidSignature):
        public_key.verify(base64.b64decode(swapped["value"]), statement(swapped, response.content))


def test_the_json_report_carries_the_head_in_its_body(client, busy):
    response = exported_file(client, busy, "json")
    seq, hash_ = response.headers["kindling-evidence-head"].split(":")
    assert response.json()["data"]["evidenceHead"] == {"seq": int(seq), "hash": hash_}


def test_the_pdf_prints_the_head_and_the_key_in_its_footer(client, busy):
    response = exported_file(client, busy, "pdf")
    key_id = check_signature(client, response)
    text = " ".join(page.extract_text() for page in pypdf.PdfReader(io.BytesIO(response.content)).pages)
    assert f"Evidence head {response.headers['kindling-evidence-head']}, signed with key {key_id}" in " ".join(
        text.split()
    )


def test_an_organization_without_events_exports_the_empty_head(client, db, runtime):
    # Everyone's joining is logged: only an organization nobody has joined yet has an empty log.
    organization = accounts.create_organization(db, name="Nobody yet")
    exported = exports.export_report(
        db, signer_for(runtime.settings), organization_id=organization.id, framework_id="gri", file_format="csv"
    )
    response = types.SimpleNamespace(
        headers={name.lower(): value for name, value in exported.extra_headers}, content=exported.content
    )
    assert response.headers["kindling-evidence-head"] == "0:" + "0" * 64
    check_signature(client, response)


def test_the_json_export_carries_its_signature_in_its_body(client, busy):
    """The file alone can be checked: its `signature` is the header's, over the canonical JSON of the rest."""
    response = exported_file(client, busy, "json")
    match = SIGNATURE.fullmatch(response.headers["kindling-signature"])
    check_signature(client, response)
    body = response.json()
    assert set(body) == {"data", "signature"}
    head = body["data"]["evidenceHead"]
    assert body["signature"] == {
        "keyId": match["key_id"],
        "algorithm": "Ed25519",
        "organizationId": busy.organization_id,
        "framework": "gri",
        "period": body["data"]["period"],
        "format": "json",
        "evidenceHead": head,
        "digest": hashlib.sha256(rfc8785.dumps({"data": body["data"]})).hexdigest(),
        "value": match["value"],
    }
    # Spacing is not content: the same body written otherwise has the same digest.
    spaced = json.dumps(body, indent=2).encode()
    assert digest("json", spaced) == match["digest"]
    edited = json.loads(response.content)
    edited["data"]["complianceRate"] += 1
    assert digest("json", json.dumps(edited).encode()) != match["digest"]
