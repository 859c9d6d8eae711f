"""What Kindling shows in Slack, as Block Kit: the recipient's message, the Recognize modal and the App Home."""

from __future__ import annotations

import json

CATEGORY_NAMES = {"peer_recognition": "Peer recognition", "community": "Community", "wellbeing": "Wellbeing"}
CONFIRM, DISPUTE = "confirm", "dispute"
RECOGNIZE = "recognize"
# Block and action ids of the modal's two inputs, read back from its submission.
CATEGORY_INPUT, DESCRIPTION_INPUT = "category", "description"


def _escape(text: str) -> str:
    """Text as Slack's mrkdwn shows it literally (its three control characters escaped)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _section(text: str) -> dict:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text[:3000]}}


def recipient_message(*, act_id: str, sender_slack_id: str, description: str, category: str) -> dict:
    """The direct message to an act's recipient, with their Confirm and Dispute buttons."""
    text = f"<@{sender_slack_id}> recognized you ({CATEGORY_NAMES[category]}): {_escape(description)}"
    return {
        "text": text[:3000],
        "blocks": [
            _section(text),
            _section("Confirm it if it happened as told, or dispute it. Your answer is the act's peer acknowledgment."),
            {
                "type": "actions",
                "block_id": "verification",
                "elements": [
                    {
                        "type": "button",
                        "action_id": CONFIRM,
                        "text": {"type": "plain_text", "text": "Confirm"},
                        "style": "primary",
                        "value": act_id,
                    },
                    {
                        "type": "button",
                        "action_id": DISPUTE,
                        "text": {"type": "plain_text", "text": "Dispute"},
                        "style": "danger",
                        "value": act_id,
                    },
                ],
            },
        ],
    }


def decided_message(decision: str) -> dict:
    """What replaces the recipient's message once they have answered."""
    text = (
        "You confirmed this act. Thank you!"
        if decision == CONFIRM
        else "You disputed this act; an admin may look into it."
    )
    return {"replace_original": True, "text": text, "blocks": [_section(text)]}


def ephemeral(text: str) -> dict:
    """A reply only the person who asked sees."""
    return {"response_type": "ephemeral", "replace_original": False, "text": text[:3000]}


def recognize_modal(*, recipient_slack_id: str) -> dict:
    """The Recognize shortcut's modal: a category and a description of what the message's author did."""
    options = [{"text": {"type": "plain_text", "text": name}, "value": value} for value, name in CATEGORY_NAMES.items()]
    return {
        "type": "modal",
        "callback_id": RECOGNIZE,
        # Signed back by Slack with the submission: whom the act is for.
        "private_metadata": json.dumps({"recipient": recipient_slack_id}),
        "title": {"type": "plain_text", "text": "Recognize"},
        "submit": {"type": "plain_text", "text": "Recognize"},
        "close": {"type": "plain_text", "text": "Cancel"},
        "blocks": [
            _section(f"Recognize <@{recipient_slack_id}> for their kindness."),
            {
                "type": "input",
                "block_id": CATEGORY_INPUT,
                "label": {"type": "plain_text", "text": "Category"},
                "element": {
                    "type": "static_select",
                    "action_id": CATEGORY_INPUT,
                    "options": options,
                    "initial_option": options[0],
                },
            },
            {
                "type": "input",
                "block_id": DESCRIPTION_INPUT,
                "label": {"type": "plain_text", "text": "What did they do?"},
                "element": {
                    "type": "plain_text_input",
                    "action_id": DESCRIPTION_INPUT,
                    "multiline": True,
                    "min_length": 1,
                    "max_length": 2000,
                },
            },
        ],
    }


def home_view(*, organization: str, acts: list[dict], stats: dict) -> dict:
    """The App Home of a member: their recent acts and their organization's statistics."""
    lines = [
        f"• {act['createdAt'][:10]} {CATEGORY_NAMES[act['category']]}, to {act['recipient']}: "
        f"{_escape(act['description'][:200])} (level {act['verifiedLevel']} verified of {act['requestedLevel']})"
        for act in acts
    ]
    by_category = ", ".join(f"{CATEGORY_NAMES[name]} {count}" for name, count in stats["byCategory"].items())
    return {
        "type": "home",
        "blocks": [
            {"type": "header", "text": {"type": "plain_text", "text": "Your recent acts"}},
            _section("\n".join(lines) if lines else "You have not recognized anyone yet: try `/kindness @someone …`."),
            {"type": "divider"},
            {"type": "header", "text": {"type": "plain_text", "text": f"{organization[:130]} in numbers"}},
            _section(
                f"*{stats['total']}* acts ({by_category}); *{stats['recentCount']}* in the last 7 days; "
                f"average ripple score *{stats['averageRippleScore']}*."
            ),
        ],
    }


def unmatched_home(reason: str) -> dict:
    """The App Home of someone Kindling cannot match to a member."""
    return {"type": "home", "blocks": [_section(f"Kindling cannot show you anything: {reason}")]}
