import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kindling.themes import (
    MODES,
    TOKEN_NAMES,
    format_value,
    generate_theme,
    parse_hex,
    parse_value,
    to_hex,
    validate_theme,
)


def test_token_names_are_the_31_shadcn_tokens_in_order():
    assert len(TOKEN_NAMES) == len(set(TOKEN_NAMES)) == 31
    assert TOKEN_NAMES[:4] == ("background", "foreground", "card", "card-foreground")
    assert TOKEN_NAMES[14:18] == ("destructive", "border", "input", "ring")
    assert TOKEN_NAMES[-1] == "sidebar-ring"


@pytest.mark.parametrize(
    ("text", "expected"),
    [("0.5 0.1 20", (0.5, 0.1, 20.0)), ("1 0 0", (1.0, 0.0, 0.0)), ("0 0.5 360", (0.0, 0.5, 360.0))],
)
def test_parse_value_reads_l_c_h(text, expected):
    assert parse_value(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "1 2",
        "0.5 0.1 400",
        "1.1 0 0",
        "0.5 0.6 0",
        "0.5  0.1 20",
        "1e-1 0 0",
        "-0.1 0 0",
        " 0.5 0.1 20",
        "0.5 0.1 20 ",
        "0.5 0.1 20\n",
        ".5 0.1 20",
        "0.5 0.1 nan",
        "0,5 0.1 20",
        "٠.5 0 0",
        "",
    ],
)
def test_parse_value_rejects_malformed_and_out_of_range(text):
    with pytest.raises(ValueError):
        parse_value(text)


@settings(max_examples=300)
@given(st.floats(-1, 2), st.floats(-1, 1), st.floats(-720, 720))
def test_format_value_round_trips_in_range(l, c, h):
    value = format_value(l, c, h)
    parsed = parse_value(value)
    assert format_value(*parsed) == value
    assert 0 <= parsed[0] <= 1 and 0 <= parsed[1] <= 0.5 and 0 <= parsed[2] < 360


def test_format_value_rounds_and_drops_the_hue_of_greys():
    assert format_value(0.98512, 0.00001, 264.3) == "0.9851 0 0"
    assert format_value(0.5, 0.123456, 359.999) == "0.5 0.1235 0"
    assert format_value(0.5, 0.1, float("nan")) == "0.5 0.1 0"
    assert format_value(-0.0, -0.0, 12.345) == "0 0 0"


def _valid_theme():
    return generate_theme("#3366cc")


def test_validate_theme_accepts_a_complete_theme():
    assert validate_theme(_valid_theme()) == {}


def test_validate_theme_reports_missing_unknown_and_invalid_per_mode():
    theme = _valid_theme()
    del theme["light"]["ring"]
    del theme["light"]["chart-3"]
    theme["light"]["brand"] = "0.5 0.1 20"
    theme["dark"]["card"] = "1 2"
    theme["dark"]["muted"] = "0.5 0.1 400"
    theme["dark"]["accent"] = "0.5  0.1 20"
    theme["dark"]["border"] = "1e-1 0 0"
    theme["dark"]["input"] = 0.5
    assert validate_theme(theme) == {
        "light": {"missing": ["ring", "chart-3"], "unknown": ["brand"]},
        "dark": {"invalid": ["card", "muted", "accent", "border", "input"]},
    }


def test_validate_theme_reports_absent_modes_and_stray_keys():
    theme = {"light": _valid_theme()["light"], "dark": "nope", "sepia": {}}
    assert validate_theme(theme) == {"dark": {"missing": list(TOKEN_NAMES)}, "unknown": ["sepia"]}
    assert validate_theme([]) == {mode: {"missing": list(TOKEN_NAMES)} for mode in MODES}


@pytest.mark.parametrize(("text", "expected"), [("#AbC", "#aabbcc"), ("#3366CC", "#3366cc"), ("#000", "#000000")])
def test_parse_hex_normalises(text, expected):
    assert parse_hex(text) == expected


@pytest.mark.parametrize("text", ["#12", "123456", "#ggg", "#1234", "#12345g", "#1234567", " #123", "#123\n", ""])
def test_parse_hex_rejects_other_strings(text):
    with pytest.raises(ValueError):
        parse_hex(text)


def test_to_hex_gives_srgb_hex_and_maps_out_of_gamut_values():
    assert to_hex("1 0 0") == "#ffffff"
    assert to_hex("0 0 0") == "#000000"
    assert to_hex("0.6280 0.2577 29.23") == "#ff0000"
    assert to_hex("0.7 0.5 150").startswith("#") and len(to_hex("0.7 0.5 150")) == 7
