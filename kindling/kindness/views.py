"""Handlers of kindness acts, their statistics, and their verification by attesters."""

from __future__ import annotations

import flask

from kindling.kindness import acts as kindness
from kindling.kindness import attest_page, verification
from kindling.kindness import stats as kindness_stats
from kindling.kindness.models import KindnessAct
from kindling.kindness.verification_models import Attestation, VerificationDecision
from kindling.platform import access
from kindling.platform.request import Reply, db, may_commit, runtime


def create_act(body: dict, token_info: dict) -> Reply:
    act = kindness.create_act(
        db(),
        runtime().cache,
        caller=access.principal(token_info),
        description=body["description"],
        category=body["category"],
        verification_level=body["verificationLevel"],
        recipient_id=body["recipientId"],
        media=body.get("media"),
        commit=may_commit(),
    )
    return {"data": act_body(act)}, 201


def list_acts(
    token_info: dict,
    limit: int,
    category: str | None = None,
    user_id: str | None = None,
    start_date: str | None = None,
    end_date: str | None = None,
    cursor: str | None = None,
) -> Reply:
    acts, next_cursor = kindness.list_acts(
        db(),
        caller=access.principal(token_info),
        category=category,
        user_id=user_id,
        start_date=start_date,
        end_date=end_date,
        limit=limit,
        cursor=cursor,
    )
    return {"data": [act_body(act) for act in acts], "nextCursor": next_cursor}, 200


def get_act(id_: str, token_info: dict) -> Reply:
    act = kindness.get_act(db(), caller=access.principal(token_info), act_id=id_)
    return {"data": act_body(act)}, 200


def update_act(id_: str, body: dict, token_info: dict) -> Reply:
    act = kindness.update_act(
        db(),
        runtime().cache,
        caller=access.principal(token_info),
        act_id=id_,
        description=body.get("description"),
        category=body.get("category"),
        media=body.get("media"),
        verification_level=body.get("verificationLevel"),
    )
    return {"data": act_body(act)}, 200


def get_stats(token_info: dict) -> Reply:
    caller = access.principal(token_info)
    stats = kindness_stats.get_stats_json(db(), runtime().cache, organization_id=caller.member_of)
    # The statistics' JSON, wrapped as it is: {"data": …}.
    return flask.Response('{"data":' + stats + "}", status=200, mimetype="application/json")


def act_body(act: KindnessAct | kindness.ActRow) -> dict:
    return {
        "id": act.id,
        "description": act.description,
        "category": act.category,
        "verificationLevel": act.verification_level,
        "verifiedLevel": act.verified_level,
        "verification": {
            "status": act.verification_status,
            "requestedLevel": act.verification_level,
            "awaiting": act.verification_awaiting,
        },
        "recipientId": act.recipient_id,
        "userId": act.user_id,
        "organizationId": act.organization_id,
        "media": act.media,
        "createdAt": act.created_at,
        "updatedAt": act.updated_at,
        "rippleScore": kindness.ripple_score(act),
        "source": act.source,
    }


def decide_verification(id_: str, body: dict, token_info: dict) -> Reply:
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


def list_verifications(id_: str, token_info: dict) -> Reply:
    decisions = verification.list_decisions(db(), caller=access.principal(token_info), act_id=id_)
    return {"data": [decision_body(decision, attestation) for decision, attestation in decisions]}, 200


def list_pending_verifications(token_info: dict, limit: int, cursor: str | None = None) -> Reply:
    acts, next_cursor = verification.list_pending(db(), caller=access.principal(token_info), limit=limit, cursor=cursor)
    return {"data": [act_body(act) for act in acts], "nextCursor": next_cursor}, 200


def request_attestation(id_: str, body: dict, token_info: dict) -> Reply:
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


def lookup_attestation(body: dict) -> Reply:
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


def answer_attestation(body: dict) -> Reply:
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


def attestation_page() -> Reply:
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
