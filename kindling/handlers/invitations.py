"""Invitations: consultants send and cancel them, organization admins accept or decline them."""

from __future__ import annotations

from kindling import access
from kindling.handlers.auth import organization_body
from kindling.handlers.clients import consultant_body, relationship_body
from kindling.persistence.base import utcnow
from kindling.persistence.clients import Invitation
from kindling.runtime import db
from kindling.services import clients


def list_invitations(token_info: dict, limit: int, status: str | None = None, cursor: str | None = None):
    caller = access.principal(token_info)
    if caller.is_consultant:
        owner = {"consultant_id": caller.user_id}
    else:
        owner = {"organization_id": access.admin(token_info).organization_id}
    invitations, next_cursor = clients.list_invitations(db(), **owner, status=status, limit=limit, cursor=cursor)
    return {"data": [invitation_body(i) for i in invitations], "nextCursor": next_cursor}, 200


def send_invitation(body: dict, token_info: dict):
    caller = access.consultant(token_info)
    invitation = clients.send_invitation(
        db(), consultant_id=caller.user_id, organization_id=body["organizationId"], message=body.get("message")
    )
    return {"success": True, "data": invitation_body(invitation)}, 200


def accept_invitation(body: dict, token_info: dict):
    caller = access.admin(token_info)
    relationship = clients.accept_invitation(
        db(), organization_id=caller.organization_id, invitation_id=body["invitationId"]
    )
    return {"success": True, "data": relationship_body(relationship)}, 200


def decline_invitation(body: dict, token_info: dict):
    caller = access.admin(token_info)
    invitation = clients.decline_invitation(
        db(), organization_id=caller.organization_id, invitation_id=body["invitationId"]
    )
    return {"success": True, "data": invitation_body(invitation)}, 200


def cancel_invitation(body: dict, token_info: dict):
    caller = access.consultant(token_info)
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
