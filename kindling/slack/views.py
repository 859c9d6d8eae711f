"""Handlers of the Slack app: installation, events, commands and interactions."""

from __future__ import annotations

import flask
from connexion import NoContent

from kindling.platform import access
from kindling.platform.request import Reply, db, runtime
from kindling.slack import inbound, installation
from kindling.slack.models import SlackInstallation

CALLBACK_PATH = "/api/integrations/slack/callback"


def install_slack(token_info: dict) -> Reply:
    caller = access.principal(token_info)
    url = installation.start_install(db(), caller=caller, settings=runtime().settings, redirect_uri=redirect_uri())
    return NoContent, 302, {"Location": url}


def slack_callback(state: str, code: str | None = None, error: str | None = None) -> Reply:
    # The state is spent in a transaction of its own, committed whatever happens next: it is never good twice.
    with runtime().session_factory() as own, own.begin():
        pending = installation.consume_state(own, state=state)
    if code is None:
        installation.refused_at_slack(error)
    found = installation.finish_install(
        db(), pending=pending, code=code, settings=runtime().settings, redirect_uri=redirect_uri()
    )
    return {"data": installation_body(found)}, 200


def get_slack(token_info: dict) -> Reply:
    caller = access.principal(token_info)
    return {"data": installation_body(installation.get_installation(db(), organization_id=caller.member_of))}, 200


def delete_slack(token_info: dict) -> Reply:
    caller = access.principal(token_info)
    installation.uninstall(db(), organization_id=caller.member_of)
    return NoContent, 204


def receive_slack_command() -> Reply:
    settings = runtime().settings
    answer = inbound.receive_command(
        db(), settings=settings, body=flask.request.get_data(), headers=dict(flask.request.headers)
    )
    return answer, 200


def receive_slack_interaction() -> Reply:
    answer = inbound.receive_interaction(
        db(),
        runtime().cache,
        settings=runtime().settings,
        body=flask.request.get_data(),
        headers=dict(flask.request.headers),
    )
    if answer is not None:
        return answer, 200
    # Slack takes an empty 200 as "received" (and closes a submitted modal).
    response = flask.Response(status=200)
    del response.headers["Content-Type"]
    return response


def receive_slack_event() -> Reply:
    answer = inbound.receive_event(
        db(), settings=runtime().settings, body=flask.request.get_data(), headers=dict(flask.request.headers)
    )
    return answer, 200


def redirect_uri() -> str:
    """The redirect URL registered with the Slack app: from PUBLIC_URL, else from this request's own URL."""
    base = runtime().settings.public_url or flask.request.host_url.rstrip("/")
    return base + CALLBACK_PATH


def installation_body(found: SlackInstallation) -> dict:
    return {
        "teamId": found.team_id,
        "teamName": found.team_name,
        "botUserId": found.bot_user_id,
        "scopes": [scope for scope in found.scopes.split(",") if scope],
        "installedBy": found.installed_by,
        "installedAt": found.installed_at,
    }
