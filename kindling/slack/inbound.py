"""The three requests Slack sends: slash commands, interactions and events (docs/decisions.md §17).

Each is verified before anything in it is read, refused unless its team is installed here, and
acted on once. Each is answered at once: what needs Slack's Web API goes to the worker
(kindling/slack/jobs.py), except opening the Recognize modal, whose trigger lasts 3 s.
"""

from __future__ import annotations

import json
import logging
import re
import urllib.parse
from collections.abc import Mapping

from sqlalchemy.orm import Session

from kindling.config import Settings
from kindling.errors import BadRequest
from kindling.platform.cache import Cache
from kindling.platform.storable_text import carries_unstorable_text
from kindling.slack import blocks, installation, jobs, recognition, signed_requests, web_api
from kindling.slack.models import SlackInstallation

log = logging.getLogger(__name__)

COMMAND = "/kindness"
DEFAULT_CATEGORY = "peer_recognition"
MAX_DESCRIPTION = 2000
# `<@U123>` or `<@U123|alice>`: how Slack writes a mention when the command escapes users.
_MENTION = re.compile(r"\s*<@([UW][A-Z0-9]{1,30})(?:\|[^>]*)?>\s*(.*)", re.DOTALL)
_HASHTAG = re.compile(r"(?:^|\s)#([a-z_]+)\s*$")
USAGE = (
    "Usage: `/kindness @someone what they did #category`, where the category is one of "
    + ", ".join(f"`#{name}`" for name in blocks.CATEGORY_NAMES)
    + f" (`#{DEFAULT_CATEGORY}` when none is given)."
)


def _member(value: object, *names: str) -> object:
    """`value[names[0]][names[1]]…` of Slack's JSON, or None where any step is not an object holding the name."""
    for name in names:
        value = value.get(name) if isinstance(value, dict) else None
    return value


def _form(body: bytes) -> dict[str, str]:
    try:
        fields = urllib.parse.parse_qs(body.decode(), keep_blank_values=True, strict_parsing=False)
    except UnicodeDecodeError:
        raise BadRequest("The body is not a form", code="invalid_payload") from None
    return {name: values[0] for name, values in fields.items()}


def receive_command(db: Session, *, settings: Settings, body: bytes, headers: Mapping[str, str]) -> dict:
    """A `/kindness` command: checked now, recorded by the worker; the immediate ephemeral answer."""
    signed_requests.verify(settings=settings, body=body, headers=headers)
    form = _form(body)
    found = signed_requests.installation_for(db, form.get("team_id"))
    if not signed_requests.first_seen(db, headers=headers):
        return blocks.ephemeral("Already received.")
    if form.get("command", COMMAND) != COMMAND:
        return blocks.ephemeral(f"Kindling answers {COMMAND} only.")
    parsed = parse_command(form.get("text", ""))
    if isinstance(parsed, str):
        return blocks.ephemeral(parsed)
    recipient, description, category = parsed
    sender = form.get("user_id")
    if not sender:
        raise BadRequest("The command names no user", code="invalid_payload")
    if recipient == sender:
        return blocks.ephemeral("Nothing was recorded: you cannot recognize yourself.")
    _record_later(
        db,
        found,
        sender=sender,
        recipient=recipient,
        description=description,
        category=category,
        response_url=form.get("response_url") or None,
    )
    return blocks.ephemeral(f"Recording your recognition of <@{recipient}>…")


def _record_later(
    db: Session,
    found: SlackInstallation,
    *,
    sender: str,
    recipient: str,
    description: str,
    category: str,
    response_url: str | None,
) -> None:
    """Leave the act to the worker: it matches both people, records it and tells them."""
    jobs.enqueue(
        db,
        team_id=found.team_id,
        kind=jobs.RECORD,
        payload={
            "senderSlackId": sender,
            "recipientSlackId": recipient,
            "description": description,
            "category": category,
            "responseUrl": response_url,
        },
    )


def parse_command(text: str) -> tuple[str, str, str] | str:
    """`(recipient Slack id, description, category)` of a command's text, or what is wrong with it."""
    mention = _MENTION.fullmatch(text)
    if mention is None:
        return "Say whom you recognize first, with an @mention. " + USAGE
    recipient, rest = mention.groups()
    category = DEFAULT_CATEGORY
    tag = _HASHTAG.search(rest)
    if tag is not None:
        if tag.group(1) not in blocks.CATEGORY_NAMES:
            return f"`#{tag.group(1)}` is not a category. " + USAGE
        category, rest = tag.group(1), rest[: tag.start()]
    # Slack escapes these three in a command's text; the act keeps what the person typed.
    description = rest.strip().replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    if not description:
        return "Say what they did. " + USAGE
    if carries_unstorable_text(description):
        return "The description holds a character Kindling cannot store (NUL, or half of a surrogate pair)."
    if len(description) > MAX_DESCRIPTION:
        return f"The description is {len(description)} characters long; at most {MAX_DESCRIPTION} fit."
    return recipient, description, category


def receive_interaction(
    db: Session, cache: Cache, *, settings: Settings, body: bytes, headers: Mapping[str, str]
) -> dict | None:
    """A button click, the Recognize shortcut or the modal's submission; the answer's body, if any."""
    signed_requests.verify(settings=settings, body=body, headers=headers)
    try:
        payload = json.loads(_form(body).get("payload", ""))
    except ValueError:
        raise BadRequest("The form's payload is not JSON", code="invalid_payload") from None
    if not isinstance(payload, dict):
        raise BadRequest("The form's payload is not an object", code="invalid_payload")
    found = signed_requests.installation_for(db, _member(payload, "team", "id") or _member(payload, "user", "team_id"))
    if not signed_requests.first_seen(db, headers=headers):
        return None
    slack_id = _member(payload, "user", "id")
    if not isinstance(slack_id, str):
        raise BadRequest("The interaction names no user", code="invalid_payload")
    kind = payload.get("type")
    if kind == "block_actions":
        _click(db, cache, found, payload, slack_id)
    elif kind == "message_action" and payload.get("callback_id") == blocks.RECOGNIZE:
        _open_recognize(db, settings, found, payload, slack_id)
    elif kind == "view_submission" and _member(payload, "view", "callback_id") == blocks.RECOGNIZE:
        return _submit_recognize(db, found, payload, slack_id)
    return None


def _click(db: Session, cache: Cache, found: SlackInstallation, payload: dict, slack_id: str) -> None:
    actions = payload.get("actions")
    action = actions[0] if isinstance(actions, list) and actions and isinstance(actions[0], dict) else {}
    decision = action.get("action_id")
    if not isinstance(decision, str) or decision not in (blocks.CONFIRM, blocks.DISPUTE):
        return
    outcome = recognition.decide_from_click(
        db, cache, installation=found, slack_id=slack_id, act_id=action.get("value"), decision=decision
    )
    message = blocks.decided_message(decision) if outcome.decided else blocks.ephemeral(outcome.message)
    _reply_later(db, found, payload, slack_id, message)


def _reply_later(db: Session, found: SlackInstallation, payload: dict, slack_id: str, message: dict) -> None:
    jobs.enqueue(
        db,
        team_id=found.team_id,
        kind=jobs.REPLY,
        payload={"responseUrl": payload.get("response_url") or None, "senderSlackId": slack_id, "message": message},
    )


def _open_recognize(db: Session, settings: Settings, found: SlackInstallation, payload: dict, slack_id: str) -> None:
    author = _member(payload, "message", "user")
    if not isinstance(author, str):
        _reply_later(db, found, payload, slack_id, blocks.ephemeral("That message has no person as its author."))
        return
    if author == slack_id:
        _reply_later(db, found, payload, slack_id, blocks.ephemeral("You cannot recognize yourself."))
        return
    # Here, not in the worker: the trigger is good for 3 s only.
    web = web_api.client(
        settings.slack_api_base_url,
        token=installation.bot_token(found, settings.secret_key or ""),
        timeout=web_api.IN_REQUEST_SECONDS,
    )
    try:
        web_api.call(
            web,
            "views_open",
            trigger_id=payload.get("trigger_id"),
            view=blocks.recognize_modal(recipient_slack_id=author),
        )
    except web_api.SlackUnavailable as exc:
        log.warning("Recognize modal not opened: %s", exc)
        _reply_later(db, found, payload, slack_id, blocks.ephemeral("Slack did not open the form in time; try again."))


def _submit_recognize(db: Session, found: SlackInstallation, payload: dict, slack_id: str) -> dict | None:
    view = _member(payload, "view")
    metadata = _member(view, "private_metadata")
    try:
        recipient = _member(json.loads(metadata), "recipient") if isinstance(metadata, str) else None
    except ValueError:
        recipient = None
    values = _member(view, "state", "values")
    category = _member(values, blocks.CATEGORY_INPUT, blocks.CATEGORY_INPUT, "selected_option", "value")
    description = _member(values, blocks.DESCRIPTION_INPUT, blocks.DESCRIPTION_INPUT, "value")
    description = description.strip() if isinstance(description, str) else ""
    errors = {}
    if carries_unstorable_text(description):
        description = ""
    chosen = category if isinstance(category, str) and category in blocks.CATEGORY_NAMES else None
    if chosen is None:
        errors[blocks.CATEGORY_INPUT] = "Choose one of the categories."
    if not 1 <= len(description) <= MAX_DESCRIPTION:
        errors[blocks.DESCRIPTION_INPUT] = f"Say what they did, in 1 to {MAX_DESCRIPTION} characters."
    if errors or chosen is None:
        return {"response_action": "errors", "errors": errors}
    if not isinstance(recipient, str):
        raise BadRequest("The submission names no recipient", code="invalid_payload")
    _record_later(
        db, found, sender=slack_id, recipient=recipient, description=description, category=chosen, response_url=None
    )
    return None


def receive_event(db: Session, *, settings: Settings, body: bytes, headers: Mapping[str, str]) -> dict:
    """An Events API delivery: the URL's challenge, an uninstall, or the App Home opened."""
    signed_requests.verify(settings=settings, body=body, headers=headers)
    try:
        envelope = json.loads(body)
    except ValueError:
        raise BadRequest("The body is not an event", code="invalid_payload") from None
    if not isinstance(envelope, dict):
        raise BadRequest("The body is not an event", code="invalid_payload")
    if envelope.get("type") == "url_verification":
        # Sent when the app's request URL is set, before any team has installed it.
        challenge = envelope.get("challenge")
        if not isinstance(challenge, str):
            raise BadRequest("The challenge is missing", code="invalid_payload")
        return {"challenge": challenge}
    found = signed_requests.installation_for(db, envelope.get("team_id"))
    if not signed_requests.first_seen(db, headers=headers):
        return {"ok": True}
    event = _member(envelope, "event")
    kind = _member(event, "type")
    if kind == "app_uninstalled" or (kind == "tokens_revoked" and _member(event, "tokens", "bot")):
        installation.remove_team(db, team_id=found.team_id)
        log.info("Slack team %s uninstalled (%s)", found.team_id, kind)
    elif kind == "app_home_opened" and _member(event, "tab") in (None, "home"):
        user = _member(event, "user")
        if isinstance(user, str):
            jobs.enqueue(db, team_id=found.team_id, kind=jobs.HOME, payload={"slackId": user})
    return {"ok": True}
