"""Slack people as the organization's members, the acts they record in Slack and the recipient's click (docs/decisions.md §17).

A Slack user is a member when `users.info` gives the email of an active member of the team's
organization. The recipient's Confirm or Dispute is their level-2 decision, taken by the same
rules as through the API (kindling/kindness/verification.py); only the Slack user the act was
sent to may give it.
"""

from __future__ import annotations

import dataclasses

from slack_sdk import WebClient
from sqlalchemy.orm import Session

from kindling.accounts import members
from kindling.accounts.models import Organization, User
from kindling.accounts.sessions import principal_of
from kindling.errors import ApiError
from kindling.kindness import acts as kindness
from kindling.kindness import verification
from kindling.platform.access import Principal
from kindling.platform.cache import Cache
from kindling.slack import web_api
from kindling.slack.models import SlackAct, SlackInstallation

REQUESTED_LEVEL = 2


class Unmatched(Exception):
    """A Slack user who is not an active member of the team's organization; the message says who and why."""


def member_of(db: Session, web: WebClient, *, installation: SlackInstallation, slack_id: str) -> Principal:
    """The active member of the installation's organization that the Slack user `slack_id` is; Unmatched otherwise."""
    who = f"<@{slack_id}>"
    try:
        answer = web_api.call(web, "users_info", user=slack_id)
    except web_api.SlackUnavailable as exc:
        if exc.error in ("user_not_found", "user_not_visible"):
            raise Unmatched(f"Slack knows no user {who} in this workspace") from None
        raise
    user = answer.get("user")
    if not isinstance(user, dict):
        user = {}
    if user.get("is_bot") or user.get("deleted"):
        raise Unmatched(f"{who} is a bot or a deactivated Slack account, not a member")
    email = (user.get("profile") or {}).get("email")
    if not isinstance(email, str) or "@" not in email:
        raise Unmatched(f"Slack gives no email address for {who}, so they cannot be matched to a member")
    organization = db.get(Organization, installation.organization_id)
    name = organization.name if organization is not None else "this organization"
    member = members.find_by_email(db, organization_id=installation.organization_id, email=email)
    if member is None:
        raise Unmatched(f"Nobody in {name} on Kindling has the email address of {who}'s Slack profile")
    if not member.active or member.erased_at is not None:
        raise Unmatched(f"{who}'s Kindling account in {name} is deactivated")
    return principal_of(member)


def record_act(
    db: Session,
    cache: Cache,
    *,
    installation: SlackInstallation,
    sender: Principal,
    sender_slack_id: str,
    recipient: Principal,
    recipient_slack_id: str,
    description: str,
    category: str,
) -> str:
    """Record the act the sender told in Slack, asking for the recipient's acknowledgment; its id."""
    act = kindness.create_act(
        db,
        cache,
        caller=sender,
        description=description,
        category=category,
        verification_level=REQUESTED_LEVEL,
        recipient_id=recipient.user_id,
        source="slack",
    )
    db.add(
        SlackAct(
            act_id=act.id,
            team_id=installation.team_id,
            sender_slack_id=sender_slack_id,
            recipient_slack_id=recipient_slack_id,
        )
    )
    db.flush()
    return act.id


@dataclasses.dataclass(frozen=True)
class ClickOutcome:
    decided: bool
    message: str


def decide_from_click(
    db: Session, cache: Cache, *, installation: SlackInstallation, slack_id: str, act_id: object, decision: str
) -> ClickOutcome:
    """The level-2 decision of the Slack user who clicked, when they are the act's recipient."""
    slack_act = db.get(SlackAct, act_id) if isinstance(act_id, str) else None
    if slack_act is None or slack_act.team_id != installation.team_id:
        return ClickOutcome(False, "Kindling knows no such act from this workspace.")
    if slack_id != slack_act.recipient_slack_id:
        return ClickOutcome(
            False, f"Only <@{slack_act.recipient_slack_id}>, whom the act is for, can confirm or dispute it."
        )
    recipient_id = kindness.recipient_of(db, act_id=slack_act.act_id)
    recipient = db.get(User, recipient_id) if recipient_id else None
    if recipient is None or recipient.organization_id != installation.organization_id:
        return ClickOutcome(False, "This act's recipient is not a member of the organization.")
    if not recipient.active or recipient.erased_at is not None:
        return ClickOutcome(False, "Your Kindling account is deactivated, so your answer cannot be recorded.")
    try:
        with db.begin_nested():
            verification.decide(
                db,
                cache,
                caller=principal_of(recipient),
                act_id=slack_act.act_id,
                level=REQUESTED_LEVEL,
                decision=decision,
            )
    except ApiError as refused:  # already decided, or a rule of level 2 the click does not meet
        return ClickOutcome(False, refused.message)
    return ClickOutcome(True, "")
