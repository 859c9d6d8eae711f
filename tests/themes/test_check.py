"""POST /api/theme/check, and the spec's theme schemas against the engine (docs/decisions.md §5)."""

from __future__ import annotations

import copy

import pytest
import yaml

from kindling.themes import TOKEN_NAMES, VALUE_PATTERN, check_theme
from kindling.web.app import SPEC
from tests.helpers import assert_envelope

CHECK = "/api/theme/check"


def test_sound_theme_passes_unchanged(client, make, theme):
    response = client.post(CHECK, json={"theme": theme}, headers=make.consultant().headers)
    assert response.status_code == 200, response.text
    assert response.json() == {"data": {"failingPairs": [], "outOfGamut": [], "repaired": theme}}


def test_reports_and_repairs_contrast_and_gamut(client, make, theme):
    broken = copy.deepcopy(theme)
    broken["light"]["foreground"] = broken["light"]["background"]
    broken["dark"]["chart-1"] = "0.7 0.4 150"
    response = client.post(CHECK, json={"theme": broken}, headers=make.consultant().headers)
    assert response.status_code == 200, response.text
    data = response.json()["data"]
    assert data["failingPairs"] == [
        {"mode": "light", "background": "background", "foreground": "foreground", "contrast": 1.0}
    ]
    assert data["outOfGamut"] == [{"mode": "dark", "token": "chart-1", "value": "0.7 0.4 150"}]
    repaired = data["repaired"]
    assert check_theme(repaired)["failingPairs"] == [] and check_theme(repaired)["outOfGamut"] == []
    lightness, chroma, hue = (float(part) for part in repaired["dark"]["chart-1"].split())
    assert lightness == 0.7 and chroma < 0.4 and hue == pytest.approx(150, abs=0.05)
    untouched = [
        (mode, name)
        for mode in theme
        for name in TOKEN_NAMES
        if (mode, name) not in {("light", "foreground"), ("dark", "chart-1")}
    ]
    assert all(repaired[mode][name] == theme[mode][name] for mode, name in untouched)


def test_offending_names_are_in_details(client, make, theme):
    bad = copy.deepcopy(theme)
    del bad["light"]["ring"]
    bad["light"]["brand"] = "0.5 0.1 100"
    bad["dark"]["primary"] = "oklch(0.5 0.1 100)"
    bad["dark"]["chart-1"] = "1.2 0 0"
    bad["dark"]["muted"] = "0.5  0.1 100"
    response = client.post(CHECK, json={"theme": bad}, headers=make.consultant().headers)
    body = assert_envelope(response, 400, "validation_error")
    lch = "must be an 'L C H' value (L 0-1, C 0-0.5, H 0-360)"
    assert [(error["location"], error["field"], error["message"]) for error in body["details"]["errors"]] == [
        ("body", "theme.light.ring", "is required: a theme has the same 31 colour names in light and dark"),
        ("body", "theme.light.brand", "is not a colour name of the theme"),
        ("body", "theme.dark.primary", lch),
        ("body", "theme.dark.muted", lch),
        ("body", "theme.dark.chart-1", lch),
    ]
    assert body["error"].startswith("theme.light.ring: is required")


def test_long_unknown_names_are_cut_and_counted(client, make, theme):
    """Names the client made up are quoted at most 60 characters long, at most 15 of them."""
    bad = copy.deepcopy(theme)
    secret = "Hunter2-super-secret!"
    for n in range(30):
        bad["light"][f"{n:02d}-" + "x" * 100 + secret] = "0.5 0.1 100"
    response = client.post(CHECK, json={"theme": bad}, headers=make.consultant().headers)
    body = assert_envelope(response, 400, "validation_error")
    assert len(response.content) < 8192 and secret not in response.text
    errors = body["details"]["errors"]
    assert len(errors) == 15 and all(len(error["field"]) <= 200 for error in errors)


def test_empty_modes_list_the_first_fifteen_names(client, make):
    response = client.post(CHECK, json={"theme": {"light": {}, "dark": {}}}, headers=make.consultant().headers)
    body = assert_envelope(response, 400, "validation_error")
    assert [error["field"] for error in body["details"]["errors"]] == [
        f"theme.light.{name}" for name in TOKEN_NAMES[:15]
    ]


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"theme": None},
        {"theme": {"light": {}}},
        {"theme": {"light": {}, "dark": {}, "sepia": {}}},
        {"theme": {"light": {"primary": 0.5}, "dark": {}}},
        {"theme": {"light": {f"name-{n}": "0 0 0" for n in range(65)}, "dark": {}}},
        {"theme": {"light": {}, "dark": {}}, "organizationId": "x"},
    ],
)
def test_malformed_body_is_400(client, make, body):
    assert_envelope(client.post(CHECK, json=body, headers=make.consultant().headers), 400, "validation_error")


def test_consultants_only(client, make, theme):
    admin = make.admin()
    assert_envelope(client.post(CHECK, json={"theme": theme}), 401, "unauthenticated")
    assert_envelope(client.post(CHECK, json={"theme": theme}, headers=admin.headers), 403, "forbidden")
    assert_envelope(client.post(CHECK, json={"theme": theme}, headers=make.member(admin).headers), 403, "forbidden")


def test_spec_theme_matches_the_engine():
    schemas = yaml.safe_load(SPEC.read_text())["components"]["schemas"]
    tokens = schemas["ThemeModeTokens"]
    assert tokens["required"] == list(TOKEN_NAMES)
    assert list(tokens["properties"]) == list(TOKEN_NAMES)
    assert schemas["ThemeValue"]["pattern"] == f"^{VALUE_PATTERN}$"
