"""Verification of kindness acts: decisions, the caller's pending list, and attestations."""

from __future__ import annotations

from kindling.kindness import verification
from kindling.kindness.verification_models import Attestation, VerificationDecision
from kindling.platform import access
from kindling.web import attest_page
from kindling.web.handlers.kindness import act_body
from kindling.web.runtime import db, runtime


def decide_verification(id_: str, body: dict, token_info: dict):
    decision = verification.decide(
        db(),
        runtime().cache,
        caller=access.principal(token_info),
        act_id=id_,
        level=body["level"],
        decision=body["decision"],
        note=body.get("note"),
        reference=body.get("reference"),
    )
    return {"data": decision_body(decision)}, 201


def list_verifications(id_: str, token_info: dict):
    decisions = verification.list_decisions(db(), caller=access.principal(token_info), act_id=id_)
    return {"data": [decision_body(decision, attestation) for decision, attestation in decisions]}, 200


def list_pending_verifications(token_info: dict, limit: int, cursor: str | None = None):
    acts, next_cursor = verification.list_pending(db(), caller=access.principal(token_info), limit=limit, cursor=cursor)
    return {"data": [act_body(act) for act in acts], "nextCursor": next_cursor}, 200


def request_attestation(id_: str, body: dict, token_info: dict):
    state = runtime()
    attestation = verification.request_attestation(
        db(),
        state.mailer,
        caller=access.principal(token_info),
        act_id=id_,
        level=body["level"],
        attester_name=body["attesterName"],
        attester_organization=body.get("attesterOrganization"),
        attester_email=body["attesterEmail"],
        page_url=state.settings.public_url,
        secret_key=state.settings.secret_key,
    )
    data = {
        "id": attestation.id,
        "level": attestation.level,
        "attesterDomain": attestation.attester_domain,
        "expiresAt": attestation.expires_at,
        "deliveredAt": attestation.delivered_at,
    }
    return {"data": data}, 201


def lookup_attestation(body: dict):
    shown = verification.lookup_attestation(db(), token=body["token"])
    act = shown.act
    data = {
        "level": shown.attestation.level,
        "organizationName": shown.organization_name,
        "category": act.category,
        "description": act.description,
        "date": act.created_at.date().isoformat(),
        "expiresAt": shown.attestation.expires_at,
    }
    return {"data": data}, 200


def answer_attestation(body: dict):
    decision = verification.answer_attestation(
        db(),
        runtime().cache,
        token=body["token"],
        decision=body["decision"],
        name=body["name"],
        organization=body.get("organization"),
        statement=body.get("statement"),
    )
    return {"data": {"level": decision.level, "decision": decision.decision, "decidedAt": decision.decided_at}}, 200


def attestation_page():
    return attest_page.PAGE, 200, attest_page.HEADERS


def decision_body(decision: VerificationDecision, attestation: Attestation | None = None) -> dict:
    body = {
        "id": decision.id,
        "actId": decision.act_id,
        "level": decision.level,
        "decision": decision.decision,
        "decidedBy": decision.decided_by,
        "decidedAt": decision.decided_at,
    }
    if decision.note is not None:
        body["note"] = decision.note
    if decision.reference is not None:
        body["reference"] = decision.reference
    if decision.authority is not None:
        body["authority"] = decision.authority
    if attestation is not None:
        body["attester"] = {
            "name": attestation.answer_name,
            "organization": attestation.answer_organization,
            "statement": attestation.answer_statement,
        }
    return body
