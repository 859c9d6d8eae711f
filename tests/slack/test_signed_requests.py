"""Only Slack's signed requests, from an installed team, are acted on, and each once."""

from __future__ import annotations

import time
import urllib.parse

import pytest
from sqlalchemy import func, select

from kindling.slack.models import SlackInstallation, SlackJob
from tests.helpers import assert_envelope
from tests.servers.fake_slack import slack_headers


def _jobs(db) -> int:
    return db.scalar(select(func.count()).select_from(SlackJob))


def _command_body(workspace, **fields) -> bytes:
    form = {"team_id": workspace.team_id, "user_id": "U0ALICE", "command": "/kindness", "text": "<@U0BOB> thanks"}
    return urllib.parse.urlencode(form | fields).encode()


@pytest.mark.parametrize(
    "signing",
    [
        lambda: {"secret": "not-the-signing-secret"},
        lambda: {"timestamp": int(time.time()) - 301},
        lambda: {"timestamp": int(time.time()) + 310},
        lambda: {"timestamp": "1e9"},
        lambda: {"timestamp": f" {int(time.time())}"},
    ],
    ids=["bad-secret", "stale", "future", "exponent", "space"],
)
def test_a_badly_signed_or_stale_request_is_401_and_changes_nothing(workspace, signing):
    signing = signing()
    workspace.person("U0ALICE")
    workspace.person("U0BOB")
    assert_envelope(workspace.command("U0ALICE", "<@U0BOB> thanks", **signing), 401, "invalid_signature")
    assert_envelope(workspace.event({"type": "app_uninstalled"}, **signing), 401, "invalid_signature")
    assert _jobs(workspace.make.db) == 0
    assert workspace.make.db.scalar(select(func.count()).select_from(SlackInstallation)) == 1


def test_an_altered_body_or_a_missing_signature_is_401(workspace, client):
    body = _command_body(workspace)
    headers = {"Content-Type": "application/x-www-form-urlencoded", **slack_headers(body)}
    altered = body.replace(b"thanks", b"thankz")
    assert_envelope(
        client.post("/integrations/slack/commands", content=altered, headers=headers), 401, "invalid_signature"
    )
    unsigned = {"Content-Type": "application/x-www-form-urlencoded", "X-Slack-Signature": "v0=00"}
    assert client.post("/integrations/slack/commands", content=body, headers=unsigned).status_code in (400, 401)
    assert _jobs(workspace.make.db) == 0


def test_a_request_from_another_team_is_401(workspace):
    assert_envelope(workspace.command("U0ALICE", "<@U0BOB> thanks", team_id="T0STRANGER"), 401, "slack_team_unknown")
    other = {"type": "event_callback", "team_id": "T0STRANGER", "event": {"type": "app_uninstalled"}}
    assert_envelope(workspace.event(envelope=other), 401, "slack_team_unknown")
    assert _jobs(workspace.make.db) == 0
    assert workspace.make.db.scalar(select(func.count()).select_from(SlackInstallation)) == 1


def test_a_replayed_request_records_nothing_more(workspace, client):
    body = _command_body(workspace)
    headers = {"Content-Type": "application/x-www-form-urlencoded", **slack_headers(body)}
    first = client.post("/integrations/slack/commands", content=body, headers=headers)
    assert first.status_code == 200 and "Recording" in first.json()["text"]
    again = client.post("/integrations/slack/commands", content=body, headers=headers)
    assert again.status_code == 200 and again.json()["text"] == "Already received."
    assert _jobs(workspace.make.db) == 1


def test_the_events_url_verification_is_answered(slack, workspace):
    challenge = {
        "token": "legacy",
        "challenge": "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P",
        "type": "url_verification",
    }
    response = workspace.event(envelope=challenge)
    assert response.status_code == 200 and response.json() == {"challenge": challenge["challenge"]}
    assert_envelope(workspace.event(envelope=challenge, secret="wrong"), 401, "invalid_signature")


@pytest.mark.parametrize(
    "event",
    [{"type": "app_uninstalled"}, {"type": "tokens_revoked", "tokens": {"oauth": [], "bot": ["U0KINDLING"]}}],
    ids=["app_uninstalled", "tokens_revoked"],
)
def test_uninstalled_or_revoked_at_slack_removes_the_installation(workspace, client, event):
    response = workspace.event(event)
    assert response.status_code == 200 and response.json() == {"ok": True}
    assert_envelope(client.get("/api/integrations/slack", headers=workspace.admin.headers), 404, "slack_not_installed")
    assert_envelope(workspace.command("U0ALICE", "<@U0BOB> thanks"), 401, "slack_team_unknown")


def test_a_revocation_of_user_tokens_only_keeps_the_installation(workspace, client):
    assert workspace.event({"type": "tokens_revoked", "tokens": {"oauth": ["U0ADMIN"], "bot": []}}).status_code == 200
    assert client.get("/api/integrations/slack", headers=workspace.admin.headers).status_code == 200
