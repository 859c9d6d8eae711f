"""Installing the Slack app: admins only, OAuth v2 with a single-use state, the bot token sealed, one team per organization."""

from __future__ import annotations

import urllib.parse

from sqlalchemy import select

from kindling.slack import installation as installations
from kindling.slack.models import SlackInstallation
from tests.helpers import assert_envelope
from tests.servers.fake_slack import BOT_TOKEN, CLIENT_ID, SECRET_KEY, TEAM_ID
from tests.slack.conftest import Workspace


def test_install_sends_the_admin_to_slack_with_the_scopes_a_state_and_the_redirect(client, make, slack):
    admin = make.admin()
    response = client.get("/api/integrations/slack/install", headers=admin.headers, follow_redirects=False)
    assert response.status_code == 302
    location = urllib.parse.urlsplit(response.headers["location"])
    assert f"{location.scheme}://{location.netloc}{location.path}" == slack.url + "/oauth/v2/authorize"
    query = urllib.parse.parse_qs(location.query)
    assert query["client_id"] == [CLIENT_ID]
    assert query["scope"] == ["commands,chat:write,users:read,users:read.email"]
    assert query["redirect_uri"] == ["https://kindling.test/api/integrations/slack/callback"]
    assert len(query["state"][0]) >= 40


def test_the_callback_keeps_the_bot_token_sealed_and_the_state_works_once(client, make, slack):
    workspace = Workspace(client, make, slack, None)
    started = client.get("/api/integrations/slack/install", headers=workspace.admin.headers, follow_redirects=False)
    state = urllib.parse.parse_qs(urllib.parse.urlsplit(started.headers["location"]).query)["state"][0]
    slack.code("code-1")
    response = client.get("/api/integrations/slack/callback", params={"state": state, "code": "code-1"})
    assert response.status_code == 200, response.text
    data = response.json()["data"]
    assert data["teamId"] == TEAM_ID and data["installedBy"] == workspace.admin.user.id
    assert data["scopes"] == ["commands", "chat:write", "users:read", "users:read.email"]
    [exchange] = slack.calls_of("oauth.v2.access")
    assert exchange.arguments == {
        "code": "code-1",
        "redirect_uri": "https://kindling.test/api/integrations/slack/callback",
    }
    stored = make.db.scalar(select(SlackInstallation).where(SlackInstallation.team_id == TEAM_ID))
    assert BOT_TOKEN not in stored.bot_token_encrypted
    assert installations.bot_token(stored, SECRET_KEY) == BOT_TOKEN
    slack.code("code-2")
    again = client.get("/api/integrations/slack/callback", params={"state": state, "code": "code-2"})
    assert_envelope(again, 400, "slack_state_invalid")
    assert client.get("/api/integrations/slack", headers=workspace.admin.headers).json()["data"]["teamId"] == TEAM_ID


def test_only_an_admin_installs_reads_or_uninstalls(client, make, slack):
    admin = make.admin()
    member = make.member(admin)
    manager = make.manager(admin)
    for account in (member, manager):
        assert_envelope(
            client.get("/api/integrations/slack/install", headers=account.headers, follow_redirects=False), 403
        )
        assert_envelope(client.delete("/api/integrations/slack", headers=account.headers), 403)
        assert_envelope(client.get("/api/integrations/slack", headers=account.headers), 403)
    assert_envelope(client.get("/api/integrations/slack/install", follow_redirects=False), 401)


def test_a_bad_state_a_refused_code_and_a_declined_install_install_nothing(client, make, slack):
    workspace = Workspace(client, make, slack, None)
    assert_envelope(
        client.get("/api/integrations/slack/callback", params={"state": "made-up", "code": "x"}),
        400,
        "slack_state_invalid",
    )
    for params, code in (
        ({"code": "never-issued"}, "slack_oauth_failed"),
        ({"error": "access_denied"}, "slack_install_refused"),
    ):
        started = client.get("/api/integrations/slack/install", headers=workspace.admin.headers, follow_redirects=False)
        state = urllib.parse.parse_qs(urllib.parse.urlsplit(started.headers["location"]).query)["state"][0]
        assert_envelope(client.get("/api/integrations/slack/callback", params={"state": state, **params}), 400, code)
    assert_envelope(client.get("/api/integrations/slack", headers=workspace.admin.headers), 404, "slack_not_installed")


def test_one_team_belongs_to_one_organization(client, make, slack, runtime):
    first = Workspace(client, make, slack, runtime)
    assert first.install("code-a").status_code == 200
    second = Workspace(client, make, slack, runtime)
    assert_envelope(second.install("code-b"), 409, "slack_team_taken")
    other_team = Workspace(client, make, slack, runtime, team_id="T0OTHER")
    other_team.admin, other_team.organization = first.admin, first.organization
    assert_envelope(other_team.install("code-c"), 409, "slack_already_installed")
    # The same workspace again: its token is replaced.
    assert first.install("code-d").status_code == 200
    assert make.db.scalars(select(SlackInstallation.organization_id)).all() == [first.organization.id]


def test_uninstall_forgets_the_workspace(workspace, client):
    assert client.delete("/api/integrations/slack", headers=workspace.admin.headers).status_code == 204
    assert_envelope(client.get("/api/integrations/slack", headers=workspace.admin.headers), 404, "slack_not_installed")
    assert_envelope(client.delete("/api/integrations/slack", headers=workspace.admin.headers), 404)
    workspace.person("U0ALICE")
    assert_envelope(workspace.command("U0ALICE", "<@U0BOB> thanks"), 401, "slack_team_unknown")


def test_without_the_slack_settings_install_and_requests_are_503(client, make, fake_slack):
    admin = make.admin()
    response = client.get("/api/integrations/slack/install", headers=admin.headers, follow_redirects=False)
    assert_envelope(response, 503, "slack_not_configured")
    workspace = Workspace(client, make, fake_slack, None)
    assert_envelope(workspace.command("U0ALICE", "<@U0BOB> thanks"), 503, "slack_not_configured")
