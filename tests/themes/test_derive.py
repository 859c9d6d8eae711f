"""POST /api/theme/derive: a theme from brand colours with the theme engine alone, no AI provider."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kindling.branding import service as themes
from kindling.themes import generate_theme
from tests.helpers import assert_envelope, assert_sound
from tests.themes.strategies import hex_colours

DERIVE = "/api/theme/derive"
GENERATE = "/api/theme/generate"
optional_colours = st.none() | hex_colours


def body(primary: str, secondary: str | None = None, accent: str | None = None) -> dict:
    colours = {"primaryColor": primary, "secondaryColor": secondary, "accentColor": accent}
    return {name: value for name, value in colours.items() if value is not None}


def respell(colour: str) -> str:
    """The same colour written the other way: #RGB as #RRGGBB, in the other case."""
    digits = colour[1:]
    if len(digits) == 3:
        digits = "".join(digit * 2 for digit in digits)
    return "#" + digits.swapcase()


@settings(max_examples=200, deadline=None)
@given(hex_colours, optional_colours, optional_colours)
def test_derived_themes_keep_every_guarantee_and_depend_on_the_colours_alone(primary, secondary, accent):
    theme = themes.derive(primary=primary, secondary=secondary, accent=accent)
    assert_sound(theme)
    assert themes.derive(primary=primary, secondary=secondary, accent=accent) == theme
    respelled = themes.derive(
        primary=respell(primary),
        secondary=respell(secondary) if secondary else None,
        accent=respell(accent) if accent else None,
    )
    assert respelled == theme


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(hex_colours, optional_colours, optional_colours)
def test_derive_answers_the_engines_theme_over_http(client, make, primary, secondary, accent):
    consultant = make.consultant()
    response = client.post(DERIVE, json=body(primary, secondary, accent), headers=consultant.headers)
    assert response.status_code == 200, response.text
    assert response.json() == {
        "success": True,
        "theme": themes.derive(primary=primary, secondary=secondary, accent=accent),
    }


def test_works_without_an_ai_provider(client, make, runtime):
    assert not runtime.settings.ai_provider_api_key
    headers = make.consultant().headers
    assert_envelope(
        client.post(GENERATE, json={"primaryColor": "#3366ff"}, headers=headers), 503, "service_unavailable"
    )

    response = client.post(DERIVE, json={"primaryColor": "#3366ff", "accentColor": "#F59E0B"}, headers=headers)
    assert response.status_code == 200, response.text
    theme = response.json()["theme"]
    assert_sound(theme)
    assert theme == generate_theme("#3366ff", accent="#f59e0b")


def test_the_same_colours_give_the_same_theme(client, make):
    headers = make.consultant().headers
    answers = [
        client.post(DERIVE, json={"primaryColor": primary, "secondaryColor": "#123456"}, headers=headers).json()
        for primary in ("#0AF", "#00aaff", "#00AAFF", "#0af")
    ]
    assert all(answer == answers[0] for answer in answers)
    other = client.post(DERIVE, json={"primaryColor": "#0AE", "secondaryColor": "#123456"}, headers=headers).json()
    assert other["theme"] != answers[0]["theme"]


def test_never_asks_the_provider_even_when_one_is_configured(keyed, make, provider):
    response = keyed.post(DERIVE, json={"primaryColor": "#e11d48"}, headers=make.consultant().headers)
    assert response.status_code == 200
    assert response.json()["theme"] == generate_theme("#e11d48")
    assert provider.received == []


def test_counts_against_the_consultant_limit_not_generates(client, make):
    headers = make.consultant().headers
    for remaining in range(99, 92, -1):
        response = client.post(DERIVE, json={"primaryColor": "#3366ff"}, headers=headers)
        assert response.status_code == 200
        assert response.headers["x-ratelimit-limit"] == "100"
        assert response.headers["x-ratelimit-remaining"] == str(remaining)


@pytest.mark.parametrize(
    "payload",
    [
        {},
        {"primaryColor": None},
        {"primaryColor": "blue"},
        {"primaryColor": "3366ff"},
        {"primaryColor": "#36f6"},
        {"primaryColor": "#3366ffaa"},
        {"primaryColor": "#fff\n"},
        {"primaryColor": ""},
        {"primaryColor": "#3366ff", "secondaryColor": "rgb(0,0,0)"},
        {"primaryColor": "#3366ff", "accentColor": "#ggg"},
        # Context only means something to the AI provider.
        {"primaryColor": "#3366ff", "context": "Hospice care charity"},
    ],
)
def test_bad_input_is_400(client, make, payload):
    assert_envelope(client.post(DERIVE, json=payload, headers=make.consultant().headers), 400, "validation_error")


def test_consultants_only(client, make):
    admin = make.admin()
    assert_envelope(client.post(DERIVE, json={"primaryColor": "#3366ff"}), 401, "unauthenticated")
    assert_envelope(client.post(DERIVE, json={"primaryColor": "#3366ff"}, headers=admin.headers), 403, "forbidden")
    member = make.member(admin)
    assert_envelope(client.post(DERIVE, json={"primaryColor": "#3366ff"}, headers=member.headers), 403, "forbidden")
