"""The Slack users kept with the acts a person sent or received: their copy, and their erasure
(docs/decisions.md §15)."""

from __future__ import annotations

from sqlalchemy import delete, or_, select
from sqlalchemy.orm import Session

from kindling.kindness.models import KindnessAct
from kindling.slack.models import SlackAct


def export(db: Session, *, user_id: str) -> dict:
    """The Slack users kept with the acts the person sent or received, as `{teamId, userId}`."""
    sent = select(SlackAct.team_id, SlackAct.sender_slack_id).join(KindnessAct, KindnessAct.id == SlackAct.act_id)
    received = select(SlackAct.team_id, SlackAct.recipient_slack_id).join(
        KindnessAct, KindnessAct.id == SlackAct.act_id
    )
    rows = [
        *db.execute(sent.where(KindnessAct.user_id == user_id)),
        *db.execute(received.where(KindnessAct.recipient_id == user_id)),
    ]
    return {
        "slackIdentities": [
            {"teamId": team_id, "userId": slack_id} for team_id, slack_id in sorted(set(map(tuple, rows)))
        ]
    }


def erase(db: Session, *, user_id: str) -> None:
    """Drop the Slack user ids kept with the acts the person sent or received: they name the person there."""
    theirs = select(KindnessAct.id).where(or_(KindnessAct.user_id == user_id, KindnessAct.recipient_id == user_id))
    db.execute(delete(SlackAct).where(SlackAct.act_id.in_(theirs)))
