"""Client relationships, from the consultant's side (clients) and the organization's (consultants)."""

from __future__ import annotations

from kindling import access
from kindling.handlers.auth import organization_body
from kindling.persistence.accounts import User
from kindling.persistence.clients import ClientRelationship
from kindling.runtime import db
from kindling.services import clients


def list_clients(token_info: dict):
    caller = access.consultant(token_info)
    return {"data": [relationship_body(r) for r in clients.list_clients(db(), consultant_id=caller.user_id)]}, 200


def end_client(organization_id: str, token_info: dict):
    caller = access.consultant(token_info)
    relationship = clients.end_relationship(
        db(), consultant_id=caller.user_id, organization_id=organization_id, ended_by="consultant"
    )
    return {"success": True, "data": relationship_body(relationship)}, 200


def list_consultants(token_info: dict):
    caller = access.admin(token_info)
    relationships = clients.list_consultants(db(), organization_id=caller.organization_id)
    return {"data": [relationship_body(r) for r in relationships]}, 200


def end_consultant(consultant_id: str, token_info: dict):
    caller = access.admin(token_info)
    relationship = clients.end_relationship(
        db(), consultant_id=consultant_id, organization_id=caller.organization_id, ended_by="organization"
    )
    return {"success": True, "data": relationship_body(relationship)}, 200


def relationship_body(relationship: ClientRelationship) -> dict:
    return {
        "id": relationship.id,
        "consultantId": relationship.consultant_id,
        "organizationId": relationship.organization_id,
        "invitationId": relationship.invitation_id,
        "status": relationship.status,
        "acceptedAt": relationship.accepted_at,
        "endedAt": relationship.ended_at,
        "organization": organization_body(relationship.organization, with_join_code=False),
        "consultant": consultant_body(relationship.consultant),
    }


def consultant_body(consultant: User) -> dict:
    return {"id": consultant.id, "name": consultant.name, "firmName": consultant.firm_name}
