import copy

import pytest
from coloraide import Color
from hypothesis import given, settings
from hypothesis import strategies as st

from kindling.themes import (
    CONTRAST_PAIRS,
    MIN_CONTRAST,
    MODES,
    TOKEN_NAMES,
    check_theme,
    contrast,
    generate_theme,
    parse_value,
    validate_theme,
)

from .strategies import hex_colours, themes

FOREGROUNDS = {foreground for _, foreground in CONTRAST_PAIRS}


def changed_tokens(before, after):
    return {(mode, name) for mode in MODES for name in TOKEN_NAMES if before[mode][name] != after[mode][name]}


def assert_repaired(repaired):
    assert validate_theme(repaired) == {}
    for mode in MODES:
        assert tuple(repaired[mode]) == TOKEN_NAMES
        for value in repaired[mode].values():
            assert Color("oklch", list(parse_value(value))).in_gamut("srgb"), value
        for background, foreground in CONTRAST_PAIRS:
            assert contrast(repaired[mode][background], repaired[mode][foreground]) >= MIN_CONTRAST


def test_a_failing_pair_is_reported_and_only_its_foreground_repaired():
    theme = generate_theme("#3366cc")
    theme["light"]["primary-foreground"] = theme["light"]["primary"]
    theme["dark"]["muted-foreground"] = theme["dark"]["muted"]

    result = check_theme(theme)

    assert result["failingPairs"] == [
        {"mode": "light", "background": "primary", "foreground": "primary-foreground", "contrast": 1.0},
        {"mode": "dark", "background": "muted", "foreground": "muted-foreground", "contrast": 1.0},
    ]
    assert result["outOfGamut"] == []
    assert_repaired(result["repaired"])
    assert changed_tokens(theme, result["repaired"]) == {
        ("light", "primary-foreground"),
        ("dark", "muted-foreground"),
    }
    # Hue kept, and only as far from the background as 4.5:1 needs.
    old_l, _, old_h = parse_value(theme["light"]["primary-foreground"])
    new_l, new_c, new_h = parse_value(result["repaired"]["light"]["primary-foreground"])
    assert new_c > 0 and abs(new_h - old_h) < 2
    assert contrast(theme["light"]["primary"], result["repaired"]["light"]["primary-foreground"]) < 4.6


def test_reported_contrast_is_rounded_down():
    theme = generate_theme("#3366cc")
    background = theme["light"]["background"]
    theme["light"]["foreground"] = "0.6 0 0"
    ratio = contrast(background, "0.6 0 0")
    [pair] = check_theme(theme)["failingPairs"]
    assert pair["contrast"] <= ratio < pair["contrast"] + 0.01


def test_a_passing_theme_comes_back_unchanged():
    theme = generate_theme("#e11d48", secondary="#0ea5e9")
    result = check_theme(theme)
    assert result == {"failingPairs": [], "outOfGamut": [], "repaired": theme}


def test_out_of_gamut_values_are_reported_and_mapped():
    theme = generate_theme("#3366cc")
    theme["dark"]["chart-2"] = "0.7 0.4 150"
    result = check_theme(theme)
    assert result["outOfGamut"] == [{"mode": "dark", "token": "chart-2", "value": "0.7 0.4 150"}]
    l, c, h = parse_value(result["repaired"]["dark"]["chart-2"])
    assert l == 0.7 and 0 < c < 0.4 and abs(h - 150) < 1
    assert changed_tokens(theme, result["repaired"]) == {("dark", "chart-2")}


@settings(max_examples=100, deadline=None)
@given(themes)
def test_repair_of_any_valid_theme_passes_and_stays_in_gamut(theme):
    result = check_theme(theme)
    assert_repaired(result["repaired"])
    out_of_gamut = {(entry["mode"], entry["token"]) for entry in result["outOfGamut"]}
    assert changed_tokens(theme, result["repaired"]) <= out_of_gamut | {
        (mode, name) for mode in MODES for name in FOREGROUNDS
    }


@settings(max_examples=100, deadline=None)
@given(hex_colours, st.data())
def test_repair_of_in_gamut_themes_changes_exactly_the_failing_foregrounds(primary, data):
    theme = generate_theme(primary)
    broken = copy.deepcopy(theme)
    for mode in MODES:
        for foreground in data.draw(st.sets(st.sampled_from(sorted(FOREGROUNDS)))):
            broken[mode][foreground] = data.draw(st.sampled_from(list(theme[mode].values())))

    result = check_theme(broken)

    failing = {(pair["mode"], pair["foreground"]) for pair in result["failingPairs"]}
    assert result["outOfGamut"] == []
    assert changed_tokens(broken, result["repaired"]) == failing
    assert_repaired(result["repaired"])
    for mode, foreground in failing:
        background = next(bg for bg, fg in CONTRAST_PAIRS if fg == foreground)
        assert contrast(result["repaired"][mode][background], result["repaired"][mode][foreground]) < 4.6


@pytest.mark.parametrize(
    ("background", "foreground", "moves"),
    [
        ("0.5325 0.1679 262.29", "0.8 0.05 262", "lighter"),  # white text reaches 4.5:1 on this blue
        ("0.5325 0.1679 262.29", "0.4 0.05 262", "lighter"),  # black text does not reach it
        ("0.85 0.05 262", "0.6 0.05 262", "darker"),
        ("0.72 0 0", "0.8 0.05 30", "darker"),  # nothing lighter reaches 4.5:1 on this grey
        ("0.3 0.02 100", "0.2 0.02 100", "lighter"),
        # Both white and black reach 4.5:1 on this grey: the foreground keeps its side.
        ("0.565 0 0", "0.7 0.05 30", "lighter"),
        ("0.565 0 0", "0.45 0.05 30", "darker"),
    ],
)
def test_repair_moves_toward_the_nearer_passing_end(background, foreground, moves):
    theme = generate_theme("#3366cc")
    theme["light"]["primary"], theme["light"]["primary-foreground"] = background, foreground
    repaired = check_theme(theme)["repaired"]["light"]["primary-foreground"]
    old_l, new_l = parse_value(foreground)[0], parse_value(repaired)[0]
    assert new_l > old_l if moves == "lighter" else new_l < old_l
    assert MIN_CONTRAST <= contrast(background, repaired) < 4.6
