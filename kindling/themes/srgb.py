"""Token values as sRGB colours: gamut mapping, hex in and out."""

import re

from coloraide import Color

from .tokens import format_value, parse_value

_HEX = re.compile(r"#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})")
_CHROMA_STEP = 0.0001


def parse_hex(text: str) -> str:
    """Return a #RGB or #RRGGBB colour as lowercase #rrggbb, raising ValueError otherwise."""
    match = _HEX.fullmatch(text)
    if match is None:
        raise ValueError(f"not a #RGB or #RRGGBB colour: {text!r}")
    digits = match.group(1).lower()
    return "#" + (digits if len(digits) == 6 else "".join(d * 2 for d in digits))


def hex_to_lch(text: str) -> tuple[float, float, float]:
    """Return the OKLCH coordinates of a #RGB or #RRGGBB colour (hue 0 for greys)."""
    l, c, h = Color(parse_hex(text)).convert("oklch").coords(nans=False)
    return l, c, h


def color_of(value: str) -> Color:
    """Return the coloraide OKLCH colour of an "L C H" value."""
    return Color("oklch", list(parse_value(value)))


def in_gamut(value: str) -> bool:
    """Tell whether an "L C H" value lies inside the sRGB gamut (coloraide's default tolerance)."""
    return color_of(value).in_gamut("srgb")


def fit_value(l: float, c: float, h: float) -> str:
    """Return the "L C H" value of OKLCH coordinates, chroma reduced until it is inside sRGB."""
    # jnd=0 makes the fit a pure chroma search, so lightness and hue are kept.
    fitted = Color("oklch", [l, c, h]).fit("srgb", method="oklch-chroma", jnd=0)
    l, c, h = fitted.coords(nans=False)
    value = format_value(l, c, h)
    # Rounding to the value format can step just outside the gamut; grey never is.
    while not in_gamut(value):
        c = parse_value(value)[1] - _CHROMA_STEP
        value = format_value(l, c, h)
    return value


def to_hex(value: str) -> str:
    """Return the sRGB #rrggbb of an "L C H" value, gamut-mapped if it lies outside sRGB."""
    return color_of(fit_value(*parse_value(value))).convert("srgb").to_string(hex=True)
