"""Handlers of consultancies: organization search, invitations, clients and bulk invites."""

from __future__ import annotations

from werkzeug.datastructures import FileStorage

from kindling.accounts.models import User
from kindling.accounts.views import organization_body
from kindling.consulting import bulk, clients
from kindling.consulting import directory as organizations
from kindling.consulting.models import ClientRelationship, Invitation
from kindling.errors import BadRequest, NotFound, PayloadTooLarge
from kindling.evidence import witnesses
from kindling.platform import access
from kindling.platform.base import utcnow
from kindling.platform.destinations import DestinationPolicy
from kindling.platform.request import UPLOAD_LIMIT, Reply, db, runtime


def invite_clients(token_info: dict, file: FileStorage | None = None) -> Reply:
    caller = access.principal(token_info)
    if file is None:
        # Connexion's validation accepts a plain form field named `file`; Flask does not see it as a file.
        raise BadRequest("Send the CSV as a file part named file")
    # Read one byte past the limit: enough to know the file is too large without reading all of it.
    data = file.stream.read(UPLOAD_LIMIT + 1)
    if len(data) > UPLOAD_LIMIT:
        raise PayloadTooLarge(f"The file exceeds the limit of {UPLOAD_LIMIT // 1024} KB")
    results = bulk.invite_from_csv(db(), consultant_id=caller.user_id, data=data)
    invited = sum(1 for result in results if result.invitation_id is not None)
    return {
        "success": True,
        "invited": invited,
        "failed": len(results) - invited,
        "results": [_result_body(result) for result in results],
    }, 200


def _result_body(result: bulk.RowResult) -> dict:
    if result.invitation_id is not None:
        return {
            "row": result.row,
            "organizationId": result.organization_id,
            "status": "success",
            "invitationId": result.invitation_id,
        }
    return {
        "row": result.row,
        "organizationId": result.organization_id,
        "status": "failed",
        "error": result.error,
        "code": result.code,
    }


def list_clients(token_info: dict) -> Reply:
    caller = access.principal(token_info)
    return {"data": [relationship_body(r) for r in clients.list_clients(db(), consultant_id=caller.user_id)]}, 200


def end_client(organization_id: str, token_info: dict) -> Reply:
    caller = access.principal(token_info)
    relationship = clients.end_relationship(
        db(), consultant_id=caller.user_id, organization_id=organization_id, ended_by="consultant"
    )
    return {"success": True, "data": relationship_body(relationship)}, 200


def add_client_witness(organization_id: str, body: dict, token_info: dict) -> Reply:
    caller = access.principal(token_info)
    _require_client(caller.user_id, organization_id)
    witness = witnesses.add_witness(
        db(),
        organization_id=organization_id,
        name=body["name"],
        url=body["url"],
        verifier_key=body["verifierKey"],
        policy=DestinationPolicy.from_settings(runtime().settings),
        consultant_id=caller.user_id,
    )
    return {"data": witnesses.document(witness)}, 201


def list_client_witnesses(organization_id: str, token_info: dict) -> Reply:
    caller = access.principal(token_info)
    _require_client(caller.user_id, organization_id)
    found = witnesses.list_witnesses(db(), organization_id=organization_id, consultant_id=caller.user_id)
    return {"data": [witnesses.document(witness) for witness in found]}, 200


def _require_client(consultant_id: str, organization_id: str) -> None:
    if not clients.is_client(db(), consultant_id=consultant_id, organization_id=organization_id):
        raise NotFound("No active relationship with that organization")


def list_consultants(token_info: dict) -> Reply:
    caller = access.principal(token_info)
    relationships = clients.list_consultants(db(), organization_id=caller.member_of)
    return {"data": [relationship_body(r) for r in relationships]}, 200


def end_consultant(consultant_id: str, token_info: dict) -> Reply:
    caller = access.principal(token_info)
    relationship = clients.end_relationship(
        db(), consultant_id=consultant_id, organization_id=caller.member_of, ended_by="organization"
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


def list_invitations(token_info: dict, limit: int, status: str | None = None, cursor: str | None = None) -> Reply:
    caller = access.principal(token_info)
    owner = {"consultant_id": caller.user_id} if caller.is_consultant else {"organization_id": caller.organization_id}
    invitations, next_cursor = clients.list_invitations(db(), **owner, status=status, limit=limit, cursor=cursor)
    return {"data": [invitation_body(i) for i in invitations], "nextCursor": next_cursor}, 200


def send_invitation(body: dict, token_info: dict) -> Reply:
    caller = access.principal(token_info)
    invitation = clients.send_invitation(
        db(), consultant_id=caller.user_id, organization_id=body["organizationId"], message=body.get("message")
    )
    return {"success": True, "data": invitation_body(invitation)}, 200


def accept_invitation(body: dict, token_info: dict) -> Reply:
    caller = access.principal(token_info)
    relationship = clients.accept_invitation(db(), organization_id=caller.member_of, invitation_id=body["invitationId"])
    return {"success": True, "data": relationship_body(relationship)}, 200


def decline_invitation(body: dict, token_info: dict) -> Reply:
    caller = access.principal(token_info)
    invitation = clients.decline_invitation(db(), organization_id=caller.member_of, invitation_id=body["invitationId"])
    return {"success": True, "data": invitation_body(invitation)}, 200


def cancel_invitation(body: dict, token_info: dict) -> Reply:
    caller = access.principal(token_info)
    invitation = clients.cancel_invitation(db(), consultant_id=caller.user_id, invitation_id=body["invitationId"])
    return {"success": True, "data": invitation_body(invitation)}, 200


def invitation_body(invitation: Invitation) -> dict:
    return {
        "id": invitation.id,
        "organizationId": invitation.organization_id,
        "consultantId": invitation.consultant_id,
        "status": invitation.status_at(utcnow()),
        "message": invitation.message,
        "createdAt": invitation.created_at,
        "expiresAt": invitation.expires_at,
        "respondedAt": invitation.responded_at,
        "organization": organization_body(invitation.organization, with_join_code=False),
        "consultant": consultant_body(invitation.consultant),
    }


def search_organizations(q: str, token_info: dict) -> Reply:
    access.principal(token_info)
    query, found = organizations.search(db(), query=q)
    return {"organizations": [organization_body(o, with_join_code=False) for o in found], "query": query}, 200
