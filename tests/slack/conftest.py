"""The app with the Slack settings, pointed at the fake Slack on loopback, and the steps every Slack test takes."""

from __future__ import annotations

import json
import urllib.parse

import pytest

from kindling.slack import jobs
from tests.servers.fake_slack import CLIENT_ID, CLIENT_SECRET, SECRET_KEY, SIGNING_SECRET, TEAM_ID, slack_headers


@pytest.fixture
def slack(settings_with, fake_slack):
    """The running app configured for the Slack app; the fake Slack it talks to."""
    settings_with(
        slack_client_id=CLIENT_ID,
        slack_client_secret=CLIENT_SECRET,
        slack_signing_secret=SIGNING_SECRET,
        slack_api_base_url=fake_slack.api_url,
        secret_key=SECRET_KEY,
        # The fake Slack's response URLs are on loopback.
        webhook_allow_private_urls=True,
    )
    return fake_slack


class Workspace:
    """An organization with Slack installed, and the signed requests its workspace sends."""

    def __init__(self, client, make, slack, runtime, *, team_id: str = TEAM_ID) -> None:
        self.client, self.make, self.slack, self.runtime, self.team_id = client, make, slack, runtime, team_id
        self.admin = make.admin()
        self.organization = make.organization(self.admin)

    def install(self, code: str = "code-1"):
        started = self.client.get("/api/integrations/slack/install", headers=self.admin.headers, follow_redirects=False)
        assert started.status_code == 302, started.text
        state = urllib.parse.parse_qs(urllib.parse.urlsplit(started.headers["location"]).query)["state"][0]
        self.slack.code(code, team_id=self.team_id)
        return self.client.get("/api/integrations/slack/callback", params={"state": state, "code": code})

    def person(self, slack_id: str, *, member=True, email: str | None = None, **fields):
        """A Slack user; with `member`, also a member of the organization with the same email."""
        account = self.make.member(self.admin) if member else None
        self.slack.user(
            slack_id, email or (account.user.email if account else f"{slack_id.lower()}@elsewhere.test"), **fields
        )
        return account

    def post(self, path: str, body: bytes, content_type: str, **signing):
        headers = {"Content-Type": content_type, **slack_headers(body, **signing)}
        return self.client.post(path, content=body, headers=headers)

    def command(self, user_id: str, text: str, *, team_id: str | None = None, **signing):
        body = urllib.parse.urlencode(
            {
                "team_id": team_id or self.team_id,
                "team_domain": "kindly",
                "channel_id": "C0GENERAL",
                "user_id": user_id,
                "command": "/kindness",
                "text": text,
                "api_app_id": "A0KINDLING",
                "response_url": self.slack.response_url(f"command-{user_id}"),
                "trigger_id": "1.2.3",
                # A field the contract does not name: Slack adds some over time, and they are accepted.
                "is_ext_shared_channel": "false",
            }
        ).encode()
        return self.post("/integrations/slack/commands", body, "application/x-www-form-urlencoded", **signing)

    def interaction(self, payload: dict, **signing):
        payload = {"team": {"id": self.team_id}} | payload
        body = urllib.parse.urlencode({"payload": json.dumps(payload)}).encode()
        return self.post("/integrations/slack/interactions", body, "application/x-www-form-urlencoded", **signing)

    def click(self, user_id: str, action: str, act_id: str):
        return self.interaction(
            {
                "type": "block_actions",
                "user": {"id": user_id},
                "actions": [{"action_id": action, "block_id": "verification", "value": act_id, "type": "button"}],
                "response_url": self.slack.response_url(f"click-{user_id}"),
            }
        )

    def event(self, event: dict | None = None, *, envelope: dict | None = None, **signing):
        envelope = envelope or {"type": "event_callback", "team_id": self.team_id, "event_id": "Ev1", "event": event}
        return self.post("/integrations/slack/events", json.dumps(envelope).encode(), "application/json", **signing)

    def run_jobs(self) -> int:
        """What the worker does next: every job due now, until none is left."""
        runs = 0
        while ran := jobs.run_due(self.runtime.session_factory, self.runtime.settings, self.runtime.cache):
            runs += ran
        self.make.db.expire_all()
        return runs

    def acts(self, account) -> list[dict]:
        return self.client.get("/api/kindness", headers=account.headers).json()["data"]


@pytest.fixture
def workspace(client, make, slack, runtime):
    """An organization that has installed the Slack app for the fake Slack's team."""
    workspace = Workspace(client, make, slack, runtime)
    assert workspace.install().status_code == 200
    return workspace
