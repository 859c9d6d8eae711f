"""Handlers of volunteer opportunities, check-ins and check-in codes."""

from __future__ import annotations

import datetime as dt

from kindling.errors import invalid
from kindling.platform import access
from kindling.platform.request import Reply, db
from kindling.volunteering import service as volunteering
from kindling.volunteering.models import CheckIn, VolunteerOpportunity


def list_opportunities(token_info: dict, limit: int, cursor: str | None = None) -> Reply:
    caller = access.principal(token_info)
    opportunities, next_cursor = volunteering.list_opportunities(
        db(), organization_id=caller.member_of, limit=limit, cursor=cursor
    )
    return {"data": [opportunity_body(o) for o in opportunities], "nextCursor": next_cursor}, 200


def create_opportunity(token_info: dict, body: dict) -> Reply:
    caller = access.principal(token_info)
    location = body["location"]
    opportunity = volunteering.create_opportunity(
        db(),
        organization_id=caller.member_of,
        created_by=caller.user_id,
        title=body["title"],
        description=body.get("description"),
        starts_at=_timestamp(body["startsAt"], "startsAt"),
        ends_at=_timestamp(body["endsAt"], "endsAt"),
        latitude=location["latitude"],
        longitude=location["longitude"],
        radius_meters=location["radiusMeters"],
        require_code=body["requireCode"],
    )
    return {"data": opportunity_body(opportunity)}, 201


def get_opportunity(token_info: dict, id_: str) -> Reply:
    view = volunteering.view_opportunity(db(), caller=access.principal(token_info), opportunity_id=id_)
    data = opportunity_body(view.opportunity)
    data["ownCheckIn"] = check_in_body(view.own_check_in) if view.own_check_in else None
    if view.counts is not None:
        data["checkIns"] = {"total": view.counts.total, "verified": view.counts.verified}
    return {"data": data}, 200


def check_in(token_info: dict, id_: str, body: dict) -> Reply:
    record = volunteering.check_in(
        db(),
        caller=access.principal(token_info),
        opportunity_id=id_,
        latitude=body["latitude"],
        longitude=body["longitude"],
        accuracy_meters=body.get("accuracyMeters"),
        code=body.get("code"),
    )
    return check_in_body(record), 201


def get_check_in_code(token_info: dict, id_: str) -> Reply:
    shown = volunteering.show_check_in_code(db(), caller=access.principal(token_info), opportunity_id=id_)
    body = {"data": {"code": shown.code, "expiresAt": shown.expires_at, "qrSvg": shown.qr_svg}}
    return body, 200, {"Cache-Control": "no-store"}


def list_check_ins(token_info: dict, id_: str, limit: int, cursor: str | None = None) -> Reply:
    check_ins, next_cursor = volunteering.list_check_ins(
        db(), caller=access.principal(token_info), opportunity_id=id_, limit=limit, cursor=cursor
    )
    return {"data": [check_in_body(record) for record in check_ins], "nextCursor": next_cursor}, 200


def check_out(token_info: dict, id_: str) -> Reply:
    record = volunteering.check_out(db(), caller=access.principal(token_info), opportunity_id=id_)
    return {"data": check_in_body(record)}, 200


def approve_check_in(token_info: dict, id_: str, check_in_id: str, body: dict) -> Reply:
    record = volunteering.approve_check_in(
        db(),
        caller=access.principal(token_info),
        opportunity_id=id_,
        check_in_id=check_in_id,
        note=body["note"],
        hours=body.get("hours"),
    )
    return {"data": check_in_body(record)}, 200


def opportunity_body(opportunity: VolunteerOpportunity) -> dict:
    return {
        "id": opportunity.id,
        "organizationId": opportunity.organization_id,
        "title": opportunity.title,
        "description": opportunity.description,
        "startsAt": opportunity.starts_at,
        "endsAt": opportunity.ends_at,
        "location": {
            "latitude": opportunity.latitude,
            "longitude": opportunity.longitude,
            "radiusMeters": opportunity.radius_meters,
        },
        "hours": round(opportunity.hours, 2),
        "requireCode": opportunity.require_code,
        "createdBy": opportunity.created_by,
        "createdAt": opportunity.created_at,
    }


def check_in_body(record: CheckIn) -> dict:
    return {
        "id": record.id,
        "opportunityId": record.opportunity_id,
        "userId": record.user_id,
        "checkedInAt": record.checked_in_at,
        "distanceMeters": round(record.distance_meters, 2),
        "verified": record.verified,
        "evidence": {
            "location": record.location_verified,
            "code": record.code_verified,
            "approvedBy": record.approved_by,
        },
        "hours": round(record.hours, 2),
        "checkedOutAt": record.checked_out_at,
    }


def _timestamp(value: str, field: str) -> dt.datetime:
    # The spec already checked RFC 3339 syntax; this turns it into an aware UTC datetime.
    try:
        return dt.datetime.fromisoformat(value.upper()).astimezone(dt.UTC)
    except (ValueError, OverflowError):
        raise invalid("body", field, "must be a valid RFC 3339 timestamp") from None
