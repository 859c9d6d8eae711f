"""`/kindness`, the recipient's Confirm and Dispute, the Recognize shortcut and the App Home, against the fake Slack."""

from __future__ import annotations

import json
import time

import pytest
from sqlalchemy import select

from kindling.evidence.models import EvidenceEvent
from kindling.kindness.models import KindnessAct
from kindling.slack import inbound, jobs
from kindling.slack.models import SlackAct, SlackJob


def _recorded(workspace, slack_sender="U0ALICE", slack_recipient="U0BOB", text="thanks for covering my shift"):
    alice = workspace.person(slack_sender)
    bob = workspace.person(slack_recipient)
    response = workspace.command(slack_sender, f"<@{slack_recipient}|bob> {text} #peer_recognition")
    assert response.status_code == 200, response.text
    assert workspace.run_jobs() == 1
    [act] = workspace.acts(alice)
    return alice, bob, act


def test_the_command_records_a_level_2_act_from_slack_and_asks_the_recipient(workspace, slack, client):
    alice, bob, act = _recorded(workspace)
    assert act["userId"] == alice.user.id and act["recipientId"] == bob.user.id
    assert act["description"] == "thanks for covering my shift" and act["category"] == "peer_recognition"
    assert act["verificationLevel"] == 2 and act["verifiedLevel"] == 1 and act["source"] == "slack"
    assert act["verification"] == {"status": "pending", "requestedLevel": 2, "awaiting": "recipient"}
    [recorded] = workspace.make.db.scalars(select(EvidenceEvent).where(EvidenceEvent.subject_id == act["id"])).all()
    assert recorded.type == "act.recorded" and recorded.data["source"] == "slack"
    # Both people were looked up, with the bot token.
    assert [call.arguments["user"] for call in slack.calls_of("users.info")] == ["U0ALICE", "U0BOB"]
    assert {call.token for call in slack.calls if call.method != "oauth.v2.access"} == {"xoxb-test-bot-token"}
    [message] = slack.calls_of("chat.postMessage")
    assert message.arguments["channel"] == "U0BOB"
    buttons = message.arguments["blocks"][-1]["elements"]
    assert [(button["action_id"], button["value"]) for button in buttons] == [
        ("confirm", act["id"]),
        ("dispute", act["id"]),
    ]
    [(where, reply)] = slack.replies
    assert where == "command-U0ALICE" and reply["response_type"] == "ephemeral"
    assert reply["text"].startswith("Recorded your recognition of <@U0BOB>")


def test_an_act_from_the_api_says_so(client, make):
    admin = make.admin()
    body = {"description": "Helped", "category": "community", "verificationLevel": 1, "recipientId": "someone"}
    created = client.post("/api/kindness", json=body, headers=admin.headers).json()["data"]
    assert created["source"] == "api"
    [recorded] = make.db.scalars(select(EvidenceEvent).where(EvidenceEvent.subject_id == created["id"])).all()
    assert "source" not in recorded.data


@pytest.mark.parametrize(
    ("setup", "who", "why"),
    [
        (lambda w: (w.person("U0ALICE"), w.person("U0BOB", member=False)), "<@U0BOB>", "Nobody in"),
        (lambda w: (w.person("U0ALICE"), w.slack.user("U0BOB", None)), "<@U0BOB>", "gives no email"),
        (lambda w: (w.person("U0ALICE"), w.person("U0BOB", is_bot=True)), "<@U0BOB>", "is a bot"),
        (lambda w: (w.person("U0ALICE", member=False), w.person("U0BOB")), "<@U0ALICE>", "Nobody in"),
    ],
    ids=["recipient-not-a-member", "recipient-without-email", "recipient-a-bot", "sender-not-a-member"],
)
def test_someone_unmatched_gets_an_ephemeral_reply_and_nothing_is_recorded(workspace, slack, setup, who, why):
    setup(workspace)
    assert workspace.command("U0ALICE", "<@U0BOB> thanks").status_code == 200
    workspace.run_jobs()
    assert workspace.make.db.scalars(select(KindnessAct)).all() == []
    [(_, reply)] = slack.replies
    assert reply["response_type"] == "ephemeral" and reply["text"].startswith("Nothing was recorded")
    assert who in reply["text"] and why in reply["text"]
    assert slack.calls_of("chat.postMessage") == []


def test_a_deactivated_member_is_not_matched(workspace, slack, client):
    workspace.person("U0ALICE")
    bob = workspace.person("U0BOB")
    assert client.delete(f"/api/organization/members/{bob.user.id}", headers=workspace.admin.headers).status_code == 204
    workspace.command("U0ALICE", "<@U0BOB> thanks")
    workspace.run_jobs()
    [(_, reply)] = slack.replies
    assert "<@U0BOB>" in reply["text"] and "deactivated" in reply["text"]
    assert workspace.make.db.scalars(select(KindnessAct)).all() == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "<@U0BOB|bob> thanks for covering my shift #peer_recognition",
            ("U0BOB", "thanks for covering my shift", "peer_recognition"),
        ),
        ("<@U0BOB> picked up litter #community", ("U0BOB", "picked up litter", "community")),
        ("<@W0BOB> listened &amp; helped &lt;3", ("W0BOB", "listened & helped <3", "peer_recognition")),
        ("@bob thanks", "@mention"),
        ("<@U0BOB>   #community", "Say what they did"),
        ("<@U0BOB> thanks #gratitude", "`#gratitude` is not a category"),
    ],
)
def test_the_command_text(text, expected):
    parsed = inbound.parse_command(text)
    if isinstance(expected, tuple):
        assert parsed == expected
    else:
        assert isinstance(parsed, str) and expected in parsed


def test_a_command_that_does_not_fit_is_answered_at_once_and_queues_nothing(workspace, slack):
    response = workspace.command("U0ALICE", "thanks everyone")
    assert response.status_code == 200 and "Usage" in response.json()["text"]
    myself = workspace.command("U0ALICE", "<@U0ALICE> for me")
    assert "cannot recognize yourself" in myself.json()["text"]
    assert workspace.run_jobs() == 0


@pytest.mark.parametrize(("action", "status", "verified"), [("confirm", "verified", 2), ("dispute", "disputed", 1)])
def test_the_recipients_click_is_their_level_2_decision(workspace, slack, client, action, status, verified):
    _alice, bob, act = _recorded(workspace)
    response = workspace.click("U0BOB", action, act["id"])
    assert response.status_code == 200 and response.content == b""
    now = client.get(f"/api/kindness/{act['id']}", headers=bob.headers).json()["data"]
    assert now["verifiedLevel"] == verified and now["verification"]["status"] == status
    [decision] = client.get(f"/api/kindness/{act['id']}/verifications", headers=bob.headers).json()["data"]
    assert (decision["level"], decision["decision"], decision["decidedBy"]) == (2, action, bob.user.id)
    workspace.run_jobs()
    where, reply = slack.replies[-1]
    assert where == "click-U0BOB" and reply["replace_original"] is True
    # A second answer is refused by the rules of decisions: one per level.
    workspace.click("U0BOB", "dispute" if action == "confirm" else "confirm", act["id"])
    workspace.run_jobs()
    assert "already decided" in slack.replies[-1][1]["text"]


def test_anyone_elses_click_is_refused(workspace, slack, client):
    alice, _bob, act = _recorded(workspace)
    workspace.person("U0CAROL")
    for clicker in ("U0CAROL", "U0ALICE"):
        assert workspace.click(clicker, "confirm", act["id"]).status_code == 200
    workspace.run_jobs()
    assert [where for where, _ in slack.replies[-2:]] == ["click-U0CAROL", "click-U0ALICE"]
    assert all(
        "Only <@U0BOB>" in reply["text"] and reply["response_type"] == "ephemeral" for _, reply in slack.replies[-2:]
    )
    assert client.get(f"/api/kindness/{act['id']}/verifications", headers=alice.headers).json()["data"] == []


def test_a_deactivated_recipients_click_records_nothing(workspace, slack, client):
    alice, bob, act = _recorded(workspace)
    client.delete(f"/api/organization/members/{bob.user.id}", headers=workspace.admin.headers)
    workspace.click("U0BOB", "confirm", act["id"])
    workspace.run_jobs()
    assert "deactivated" in slack.replies[-1][1]["text"]
    assert client.get(f"/api/kindness/{act['id']}/verifications", headers=alice.headers).json()["data"] == []


def test_the_recognize_shortcut_opens_a_modal_and_its_submission_records_the_act(workspace, slack):
    carol = workspace.person("U0CAROL")
    dave = workspace.person("U0DAVE")
    shortcut = {
        "type": "message_action",
        "callback_id": "recognize",
        "trigger_id": "13345224609.738474920.8088930838d88f008e0",
        "user": {"id": "U0CAROL"},
        "message": {"type": "message", "user": "U0DAVE", "text": "I fixed the build", "ts": "1.2"},
        "channel": {"id": "C0GENERAL"},
        "response_url": slack.response_url("shortcut"),
    }
    assert workspace.interaction(shortcut).status_code == 200
    [opened] = slack.calls_of("views.open")
    assert opened.arguments["trigger_id"] == shortcut["trigger_id"]
    view = opened.arguments["view"]
    assert view["callback_id"] == "recognize" and json.loads(view["private_metadata"]) == {"recipient": "U0DAVE"}
    submission = {
        "type": "view_submission",
        "user": {"id": "U0CAROL"},
        "view": view
        | {
            "state": {
                "values": {
                    "category": {"category": {"type": "static_select", "selected_option": {"value": "community"}}},
                    "description": {
                        "description": {"type": "plain_text_input", "value": "  Fixed the build for all  "}
                    },
                }
            }
        },
    }
    response = workspace.interaction(submission)
    assert response.status_code == 200 and response.content == b""
    assert workspace.run_jobs() == 1
    [act] = workspace.acts(carol)
    assert (act["userId"], act["recipientId"]) == (carol.user.id, dave.user.id)
    assert (act["category"], act["description"], act["source"]) == ("community", "Fixed the build for all", "slack")
    recipient_message, confirmation = slack.calls_of("chat.postMessage")
    assert recipient_message.arguments["channel"] == "U0DAVE" and confirmation.arguments["channel"] == "U0CAROL"
    assert "Recorded your recognition of <@U0DAVE>" in confirmation.arguments["text"]


def test_a_submission_without_a_description_is_answered_with_the_modals_errors(workspace, slack):
    view = {
        "callback_id": "recognize",
        "private_metadata": json.dumps({"recipient": "U0DAVE"}),
        "state": {"values": {}},
    }
    response = workspace.interaction({"type": "view_submission", "user": {"id": "U0CAROL"}, "view": view})
    assert response.status_code == 200
    assert response.json()["response_action"] == "errors"
    assert set(response.json()["errors"]) == {"category", "description"}
    assert workspace.run_jobs() == 0


def test_recognizing_ones_own_message_is_refused_without_a_modal(workspace, slack):
    shortcut = {
        "type": "message_action",
        "callback_id": "recognize",
        "trigger_id": "1.2.3",
        "user": {"id": "U0CAROL"},
        "message": {"user": "U0CAROL", "text": "me"},
        "response_url": slack.response_url("shortcut"),
    }
    workspace.interaction(shortcut)
    workspace.run_jobs()
    assert slack.calls_of("views.open") == []
    assert "cannot recognize yourself" in slack.replies[-1][1]["text"]


def test_the_app_home_shows_the_members_acts_and_the_organizations_statistics(workspace, slack):
    _recorded(workspace, text="brought soup")
    slack.calls.clear()
    assert workspace.event({"type": "app_home_opened", "user": "U0ALICE", "tab": "home"}).status_code == 200
    assert workspace.run_jobs() == 1
    [published] = slack.calls_of("views.publish")
    assert published.arguments["user_id"] == "U0ALICE"
    shown = json.dumps(published.arguments["view"])
    assert "brought soup" in shown and "Your recent acts" in shown and "*1* acts" in shown


def test_the_app_home_of_someone_unmatched_says_why(workspace, slack):
    workspace.person("U0EVE", member=False)
    workspace.event({"type": "app_home_opened", "user": "U0EVE", "tab": "home"})
    workspace.run_jobs()
    [published] = slack.calls_of("views.publish")
    assert "Nobody in" in json.dumps(published.arguments["view"])


def test_slack_failing_is_tried_again_without_recording_twice(workspace, slack):
    alice = workspace.person("U0ALICE")
    workspace.person("U0BOB")
    slack.failing["chat.postMessage"] = "ratelimited"
    workspace.command("U0ALICE", "<@U0BOB> thanks")
    workspace.run_jobs()
    assert len(workspace.acts(alice)) == 1 and slack.replies == []
    del slack.failing["chat.postMessage"]
    job = workspace.make.db.scalars(select(SlackJob)).one()
    assert job.status == "pending" and job.attempts == 1 and "ratelimited" in job.last_error
    jobs.run_due(
        workspace.runtime.session_factory, workspace.runtime.settings, workspace.runtime.cache, now=job.next_attempt_at
    )
    assert len(workspace.acts(alice)) == 1
    assert len(slack.calls_of("chat.postMessage")) == 2 and len(slack.replies) == 1


def test_a_user_slack_does_not_know_is_unmatched_at_once_not_retried(workspace, slack):
    workspace.person("U0ALICE")
    workspace.command("U0ALICE", "<@U0GHOST> thanks")
    workspace.run_jobs()
    [(_, reply)] = slack.replies
    assert "Slack knows no user <@U0GHOST>" in reply["text"]
    assert workspace.make.db.scalars(select(SlackJob.status)).all() == ["done"]


def test_an_erasure_drops_the_slack_ids_kept_with_the_persons_acts(workspace, client):
    alice, bob, act = _recorded(workspace)
    assert workspace.make.db.get(SlackAct, act["id"]) is not None
    # Until then each person's export lists the Slack user Kindling matched them to.
    for person, slack_id in ((alice, "U0ALICE"), (bob, "U0BOB")):
        exported = client.get("/api/me/export", headers=person.headers)
        assert exported.status_code == 200, exported.text
        assert exported.json()["data"]["slackIdentities"] == [{"teamId": workspace.team_id, "userId": slack_id}]
    erased = client.post(f"/api/organization/members/{bob.user.id}/erase", headers=workspace.admin.headers)
    assert erased.status_code == 200, erased.text
    workspace.make.db.expire_all()
    assert workspace.make.db.get(SlackAct, act["id"]) is None
    exported = client.get("/api/me/export", headers=alice.headers).json()["data"]
    assert exported["slackIdentities"] == []


def test_a_shortcut_whose_modal_slack_opens_too_late_is_told_to_try_again(workspace, slack):
    slack.delays["views.open"] = 2.5
    shortcut = {
        "type": "message_action",
        "callback_id": "recognize",
        "trigger_id": "1.2.3",
        "user": {"id": "U0CAROL"},
        "message": {"user": "U0DAVE", "text": "hello"},
        "response_url": slack.response_url("shortcut"),
    }
    started = time.perf_counter()
    assert workspace.interaction(shortcut).status_code == 200
    assert time.perf_counter() - started < 3
    slack.delays.clear()
    workspace.run_jobs()
    assert "try again" in slack.replies[-1][1]["text"]


def test_work_queued_for_a_workspace_uninstalled_meanwhile_is_dropped(workspace, slack, client):
    workspace.person("U0ALICE")
    workspace.person("U0BOB")
    workspace.command("U0ALICE", "<@U0BOB> thanks")
    assert client.delete("/api/integrations/slack", headers=workspace.admin.headers).status_code == 204
    slack.calls.clear()
    assert workspace.run_jobs() == 1
    assert workspace.make.db.scalars(select(KindnessAct)).all() == [] and slack.calls == [] and slack.replies == []
    assert workspace.make.db.scalars(select(SlackJob.status)).all() == ["done"]


def test_a_response_url_is_held_to_the_outbound_destination_rules(workspace, slack, settings_with):
    # The Web API is the operator's setting (here on loopback); a response_url comes in a request.
    settings_with(webhook_allow_private_urls=False)
    alice = workspace.person("U0ALICE")
    workspace.person("U0BOB")
    workspace.command("U0ALICE", "<@U0BOB> thanks")
    workspace.run_jobs()
    assert len(workspace.acts(alice)) == 1 and len(slack.calls_of("chat.postMessage")) == 1
    assert slack.replies == []
