"""POST /api/theme/generate against a real loopback server standing in for the AI provider (docs/decisions.md §5)."""

from __future__ import annotations

import json
import time

import pytest

from kindling.branding import palette_intent
from kindling.platform.database import upgrade
from kindling.themes import generate_theme, parse_value
from tests.helpers import assert_envelope, assert_sound
from tests.helpers.contract import SINGLE_OPERATION_PHASES, Api, accounts_file, schemathesis
from tests.servers.fake_provider import KEY, completion, keyed_app
from tests.servers.live import free_port

GENERATE = "/api/theme/generate"
RATE_LIMIT_HEADERS = ("x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset")


@pytest.fixture
def short_timeout(monkeypatch):
    monkeypatch.setattr(palette_intent, "TIMEOUT_SECONDS", 0.5)


def test_asks_the_provider_and_derives_the_theme(keyed, make, provider):
    provider.answer_intent({"mood": "calm", "chromaScale": 0.7})
    body = {
        "primaryColor": "#0AF",
        "secondaryColor": "#123456",
        "accentColor": "#ABCDEF",
        "context": "Hospice care charity",
    }
    response = keyed.post(GENERATE, json=body, headers=make.consultant().headers)
    assert response.status_code == 200, response.text
    assert response.json()["success"] is True
    theme = response.json()["theme"]
    assert_sound(theme)
    expected = generate_theme(
        "#00aaff", secondary="#123456", accent="#abcdef", intent={"mood": "calm", "chromaScale": 0.7}
    )
    assert theme == expected

    [request] = provider.received
    assert request.path == "/v1/chat/completions"
    assert request.headers["Authorization"] == f"Bearer {KEY}"
    assert request.body["model"] == keyed.app.app.extensions["kindling"].settings.ai_provider_model
    assert request.body["response_format"] == {"type": "json_object"}
    system, user = request.body["messages"]
    assert system["role"] == "system" and user["role"] == "user"
    assert all(key in system["content"] for key in ("mood", "chromaScale", "neutralHue", "neutralTint"))
    assert json.loads(user["content"]) == {
        "primaryColor": "#00aaff",
        "secondaryColor": "#123456",
        "accentColor": "#abcdef",
        "context": "Hospice care charity",
    }


def test_only_given_fields_reach_the_prompt(keyed, make, provider):
    assert keyed.post(GENERATE, json={"primaryColor": "#3366ff"}, headers=make.consultant().headers).status_code == 200
    assert json.loads(provider.received[0].body["messages"][1]["content"]) == {"primaryColor": "#3366ff"}


def test_intent_shapes_the_theme(keyed, make, provider):
    headers = make.consultant().headers
    provider.answer_intent({"neutralTint": 0})
    grey = keyed.post(GENERATE, json={"primaryColor": "#3366ff"}, headers=headers).json()["theme"]
    provider.answer_intent({})
    tinted = keyed.post(GENERATE, json={"primaryColor": "#3366ff"}, headers=headers).json()["theme"]
    for mode in ("light", "dark"):
        for name in ("background", "muted", "border", "sidebar"):
            assert parse_value(grey[mode][name])[1] == 0, (mode, name)
            assert parse_value(tinted[mode][name])[1] > 0, (mode, name)
    assert_sound(grey)
    assert_sound(tinted)


def test_out_of_range_intent_is_clamped(keyed, make, provider):
    provider.answer_intent(
        {"mood": "furious", "chromaScale": 1e308, "neutralHue": "blue", "neutralTint": -5, "extra": [1]}
    )
    response = keyed.post(GENERATE, json={"primaryColor": "#e11d48"}, headers=make.consultant().headers)
    assert response.status_code == 200
    assert_sound(response.json()["theme"])


@pytest.mark.parametrize(
    "answer",
    [
        b"I'd suggest a calm palette.",
        b"\xff\xfe not even UTF-8",
        {"id": "chatcmpl-test", "object": "chat.completion"},
        {"choices": []},
        completion(None),
        completion("Here is a calm palette: soft blues."),
        completion('["calm", 0.8]'),
        completion('"calm"'),
        b"[" * 100_000,
        b" " * (palette_intent.MAX_ANSWER_BYTES + 1),
    ],
    ids=[
        "text",
        "not-utf8",
        "no-choices",
        "empty-choices",
        "null-content",
        "prose-content",
        "array-content",
        "string-content",
        "deeply-nested",
        "oversized",
    ],
)
def test_unusable_answer_falls_back_to_the_engine(keyed, make, provider, caplog, answer):
    provider.answer(200, answer)
    response = keyed.post(
        GENERATE, json={"primaryColor": "#3366ff", "accentColor": "#f59e0b"}, headers=make.consultant().headers
    )
    assert response.status_code == 200, response.text
    assert response.json()["theme"] == generate_theme("#3366ff", accent="#f59e0b")
    warnings = [r for r in caplog.records if r.name == "kindling.branding.service" and r.levelname == "WARNING"]
    assert len(warnings) == 1 and "unusable" in warnings[0].getMessage()
    assert KEY not in caplog.text


@pytest.mark.parametrize(
    ("status", "headers"),
    [
        (500, {}),
        (502, {}),
        (503, {}),
        (401, {}),
        (403, {}),
        (429, {"Retry-After": "20"}),
        (404, {}),
        (307, {"Location": "/v1/elsewhere"}),
    ],
)
def test_provider_refusing_is_503(keyed, make, provider, caplog, status, headers):
    provider.answer(status, {"error": {"message": "secret-provider-detail"}}, headers=headers)
    response = keyed.post(GENERATE, json={"primaryColor": "#3366ff"}, headers=make.consultant().headers)
    body = assert_envelope(response, 503, "service_unavailable")
    assert "provider" in body["error"]
    assert len(provider.received) == 1  # a redirect is not followed
    for text in (response.text, caplog.text):
        assert KEY not in text and "secret-provider-detail" not in text
    [record] = [r for r in caplog.records if r.name == "kindling.branding.service"]
    assert f"HTTP {status}" in record.getMessage()
    # A refused key needs the operator; the rest are transient.
    assert record.levelname == ("ERROR" if status in (401, 403) else "WARNING")


def test_provider_too_slow_to_answer_is_503(keyed, make, provider, short_timeout, caplog):
    provider.answer(200, completion("{}"), delay=10)
    started = time.monotonic()
    response = keyed.post(GENERATE, json={"primaryColor": "#3366ff"}, headers=make.consultant().headers)
    assert_envelope(response, 503, "service_unavailable")
    assert time.monotonic() - started < 3
    assert "did not answer (ReadTimeout)" in caplog.text


def test_provider_trickling_its_answer_is_503(keyed, make, provider, short_timeout, caplog):
    # Each byte arrives well within the read timeout; only the overall deadline stops it.
    provider.answer(200, completion("{}"), trickle=0.05)
    started = time.monotonic()
    response = keyed.post(GENERATE, json={"primaryColor": "#3366ff"}, headers=make.consultant().headers)
    assert_envelope(response, 503, "service_unavailable")
    assert time.monotonic() - started < 3
    assert "did not finish answering" in caplog.text


def test_unreachable_provider_is_503(settings, make, bind, caplog):
    app = bind(keyed_app(settings, f"http://127.0.0.1:{free_port()}/v1"))
    with app.test_client() as test_client:
        response = test_client.post(GENERATE, json={"primaryColor": "#3366ff"}, headers=make.consultant().headers)
    body = assert_envelope(response, 503, "service_unavailable")
    assert KEY not in response.text and KEY not in caplog.text
    assert "did not answer (ConnectionError)" in caplog.text and body["error"]


def test_no_provider_key_is_503(client, make):
    response = client.post(GENERATE, json={"primaryColor": "#3366ff"}, headers=make.consultant().headers)
    body = assert_envelope(response, 503, "service_unavailable")
    assert "no AI provider" in body["error"]


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"primaryColor": None},
        {"primaryColor": "blue"},
        {"primaryColor": "3366ff"},
        {"primaryColor": "#36f6"},
        {"primaryColor": "#3366f"},
        {"primaryColor": "#3366ffaa"},
        {"primaryColor": "#3366fg"},
        {"primaryColor": "#fff\n"},
        {"primaryColor": ""},
        {"primaryColor": "#3366ff", "secondaryColor": "rgb(0,0,0)"},
        {"primaryColor": "#3366ff", "accentColor": "#ggg"},
        {"primaryColor": "#3366ff", "context": "x" * 501},
        {"primaryColor": "#3366ff", "font": "Inter"},
    ],
)
def test_bad_input_is_400_and_never_reaches_the_provider(keyed, make, provider, body):
    response = keyed.post(GENERATE, json=body, headers=make.consultant().headers)
    assert_envelope(response, 400, "validation_error")
    assert provider.received == []


def test_bad_colour_is_400_even_without_a_provider(client, make):
    response = client.post(GENERATE, json={"primaryColor": "#fff\n"}, headers=make.consultant().headers)
    assert_envelope(response, 400, "validation_error")


def test_consultants_only(keyed, make, provider):
    admin = make.admin()
    assert_envelope(keyed.post(GENERATE, json={"primaryColor": "#3366ff"}), 401, "unauthenticated")
    assert_envelope(keyed.post(GENERATE, json={"primaryColor": "#3366ff"}, headers=admin.headers), 403, "forbidden")
    assert_envelope(
        keyed.post(GENERATE, json={"primaryColor": "#3366ff"}, headers=make.member(admin).headers), 403, "forbidden"
    )
    assert provider.received == []


def test_five_a_minute_per_consultant(rate_window, keyed, make, provider):
    consultant, other = make.consultant(), make.consultant()
    for remaining in range(4, -1, -1):
        response = keyed.post(GENERATE, json={"primaryColor": "#3366ff"}, headers=consultant.headers)
        assert response.status_code == 200
        assert response.headers["x-ratelimit-limit"] == "5"
        assert response.headers["x-ratelimit-remaining"] == str(remaining)
    response = keyed.post(GENERATE, json={"primaryColor": "#3366ff"}, headers=consultant.headers)
    body = assert_envelope(response, 429, "rate_limited")
    assert all(name in response.headers for name in RATE_LIMIT_HEADERS)
    assert response.headers["retry-after"] == str(body["retryAfter"]) and 1 <= body["retryAfter"] <= 60
    assert len(provider.received) == 5
    # The limit is the consultant's own.
    assert keyed.post(GENERATE, json={"primaryColor": "#3366ff"}, headers=other.headers).status_code == 200


@pytest.mark.live
def test_contract_with_a_provider(fresh_database_url, live_server, provider, tmp_path):
    """schemathesis over generate with a provider configured, so its 200 answers are checked too."""
    upgrade(fresh_database_url)
    provider.reset()
    server = live_server(
        DATABASE_URL=fresh_database_url,
        RATE_LIMIT_MULTIPLIER="1000",
        AI_PROVIDER_API_KEY=KEY,
        AI_PROVIDER_BASE_URL=f"http://127.0.0.1:{provider.port}/v1",
    )
    api = Api(server.url)
    consultant = api.sign_up(email="consultant@fuzz.test", accountType="consultant")
    stranger = api.sign_up(email="stranger@fuzz.test", organizationName="Stranger Org")
    accounts = accounts_file(tmp_path, consultant, stranger)
    result = schemathesis(server, accounts, SINGLE_OPERATION_PHASES, "--include-operation-id", "generate_theme")
    assert result.returncode == 0, result.stdout[-6000:]
    assert provider.received


def test_provider_repr_leaves_the_key_out():
    provider = palette_intent.Provider(base_url="http://127.0.0.1:1/v1", api_key=KEY, model="m")
    assert KEY not in repr(provider)
