"""Kindness acts and their statistics."""

from __future__ import annotations

import flask

from kindling.kindness import acts as kindness
from kindling.kindness import stats as kindness_stats
from kindling.kindness.models import KindnessAct
from kindling.platform import access
from kindling.web.runtime import db, runtime


def create_act(body: dict, token_info: dict):
    act = kindness.create_act(
        db(),
        runtime().cache,
        caller=access.principal(token_info),
        description=body["description"],
        category=body["category"],
        verification_level=body["verificationLevel"],
        recipient_id=body["recipientId"],
        media=body.get("media"),
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
):
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


def get_act(id_: str, token_info: dict):
    act = kindness.get_act(db(), caller=access.principal(token_info), act_id=id_)
    return {"data": act_body(act)}, 200


def update_act(id_: str, body: dict, token_info: dict):
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


def get_stats(token_info: dict):
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
