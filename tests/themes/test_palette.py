import itertools

import pytest
from coloraide import Color
from hypothesis import given, settings
from hypothesis import strategies as st

from kindling.themes import (
    CHART_MIN_DELTA_E,
    CONTRAST_PAIRS,
    MIN_CONTRAST,
    MODES,
    TOKEN_NAMES,
    contrast,
    format_value,
    generate_theme,
    parse_value,
    to_hex,
    validate_theme,
)

from .strategies import hex_colours, intents

CHARTS = [f"chart-{index}" for index in range(1, 6)]


def oklch(value):
    return Color("oklch", list(parse_value(value)))


@settings(max_examples=200, deadline=None)
@given(hex_colours, st.none() | hex_colours, st.none() | hex_colours, intents)
def test_generated_themes_keep_every_guarantee(primary, secondary, accent, intent):
    theme = generate_theme(primary, secondary=secondary, accent=accent, intent=intent)

    assert list(theme) == ["light", "dark"]
    assert validate_theme(theme) == {}
    for mode in MODES:
        tokens = theme[mode]
        assert tuple(tokens) == TOKEN_NAMES
        for name, value in tokens.items():
            assert format_value(*parse_value(value)) == value, name
            assert oklch(value).in_gamut("srgb"), (mode, name, value)
        for background, foreground in CONTRAST_PAIRS:
            ratio = contrast(tokens[background], tokens[foreground])
            assert ratio >= MIN_CONTRAST, (mode, background, foreground, ratio)
        for a, b in itertools.combinations(CHARTS, 2):
            distance = oklch(tokens[a]).delta_e(oklch(tokens[b]), method="ok")
            assert distance >= CHART_MIN_DELTA_E, (mode, a, b, distance)


def test_contrast_is_the_wcag_ratio():
    assert contrast("1 0 0", "0 0 0") == pytest.approx(21)
    assert contrast("0.5 0.1 20", "0.5 0.1 20") == pytest.approx(1)


def test_light_primary_and_given_secondary_are_the_brand_colours():
    theme = generate_theme("#3366cc", secondary="#2e8b57")
    assert to_hex(theme["light"]["primary"]) == "#3366cc"
    assert to_hex(theme["light"]["secondary"]) == "#2e8b57"
    assert theme["light"]["sidebar-primary"] == theme["light"]["primary"]


def test_dark_mode_lifts_a_dark_brand_colour():
    theme = generate_theme("#001f3f")
    light_l, _, hue = parse_value(theme["light"]["primary"])
    dark_l, _, dark_hue = parse_value(theme["dark"]["primary"])
    assert dark_l > light_l + 0.2
    assert dark_hue == pytest.approx(hue, abs=1)


def test_backgrounds_are_near_white_and_near_black_tinted_with_the_primary_hue():
    theme = generate_theme("#3366cc")
    _, _, primary_hue = parse_value(theme["light"]["primary"])
    light_l, light_c, light_h = parse_value(theme["light"]["background"])
    dark_l, dark_c, dark_h = parse_value(theme["dark"]["background"])
    assert light_l > 0.95 and dark_l < 0.25
    assert 0 < light_c < 0.02 and 0 < dark_c < 0.02
    assert light_h == pytest.approx(primary_hue, abs=2) and dark_h == pytest.approx(primary_hue, abs=2)


def test_chart_1_follows_the_primary_and_destructive_is_red():
    theme = generate_theme("#3366cc")
    _, _, primary_hue = parse_value(theme["light"]["primary"])
    for mode in MODES:
        assert parse_value(theme[mode]["chart-1"])[2] == pytest.approx(primary_hue, abs=2)
        _, chroma, hue = parse_value(theme[mode]["destructive"])
        assert chroma > 0.15 and 15 <= hue <= 35


def test_charts_use_the_secondary_and_accent_hues():
    theme = generate_theme("#3366cc", secondary="#2e8b57", accent="#ff8c00")
    secondary_hue = parse_value(generate_theme("#2e8b57")["light"]["primary"])[2]
    accent_hue = parse_value(generate_theme("#ff8c00")["light"]["primary"])[2]
    chart_hues = [parse_value(theme["light"][chart])[2] for chart in CHARTS]
    assert chart_hues[1] == pytest.approx(secondary_hue, abs=2)
    assert chart_hues[2] == pytest.approx(accent_hue, abs=2)


def test_junk_intent_is_ignored():
    plain = generate_theme("#3366cc")
    junk = {"mood": "furious", "chromaScale": "lots", "neutralHue": float("nan"), "neutralTint": True}
    assert generate_theme("#3366cc", intent=junk) == plain
    huge = {"mood": ["calm"], "chromaScale": 10**400, "neutralHue": float("inf"), "neutralTint": None}
    assert generate_theme("#3366cc", intent=huge) == plain
    assert generate_theme("#3366cc", intent="make it pop") == plain  # type: ignore[arg-type]


def test_intent_steers_the_palette():
    plain = generate_theme("#3366cc")
    grey = generate_theme("#3366cc", intent={"neutralTint": 0})
    assert parse_value(grey["light"]["background"])[1] == 0
    assert parse_value(grey["light"]["border"])[1] == 0
    warm = generate_theme("#3366cc", intent={"neutralHue": 40})
    assert parse_value(warm["light"]["background"])[2] == pytest.approx(40, abs=2)
    muted = generate_theme("#3366cc", intent={"chromaScale": 0.5})
    assert parse_value(muted["light"]["chart-2"])[1] < parse_value(plain["light"]["chart-2"])[1]
    assert generate_theme("#3366cc", intent={"chromaScale": 9}) == generate_theme(
        "#3366cc", intent={"chromaScale": 1.5}
    )
    assert generate_theme("#3366cc", intent={"mood": "Playful"}) != plain
    assert generate_theme("#3366cc", intent={"mood": "Playful"}) == generate_theme(
        "#3366cc", intent={"mood": "playful"}
    )
