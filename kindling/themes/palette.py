"""Derive a whole light and dark theme from brand colours and optional palette hints.

The hints ("intent", e.g. from an AI provider) are all optional. Unknown keys,
values of the wrong type and non-finite numbers are ignored, and numbers out
of range are clamped, so no answer can break the engine:

- ``mood``: one of ``MOODS``; sets the defaults below and how the chart hues
  spread around the wheel.
- ``chromaScale``: 0.5 to 1.5; multiplies the chroma of derived colours
  (tints, neutrals, ring, charts). The brand colours keep their own.
- ``neutralHue``: 0 to 360; the hue that tints backgrounds, borders and text
  (default: the primary's hue).
- ``neutralTint``: 0 to 1; how strongly neutrals carry that hue (0: greys).
"""

import math
from collections.abc import Mapping
from typing import NamedTuple

from .contrast import contrast, readable_foreground
from .srgb import fit_value, hex_to_lch
from .tokens import TOKEN_NAMES

CHART_MIN_DELTA_E = 0.08

_Lch = tuple[float, float, float]


class _Style(NamedTuple):
    chroma_scale: float
    neutral_tint: float
    chart_hue_step: float


_DEFAULT_STYLE = _Style(chroma_scale=1.0, neutral_tint=0.5, chart_hue_step=72.0)
_MOOD_STYLES = {
    "calm": _Style(chroma_scale=0.8, neutral_tint=0.6, chart_hue_step=45.0),
    "vibrant": _Style(chroma_scale=1.25, neutral_tint=0.8, chart_hue_step=72.0),
    "corporate": _Style(chroma_scale=0.9, neutral_tint=0.2, chart_hue_step=60.0),
    # 144 degrees visits the same five hues as 72 but jumps across the wheel each time.
    "playful": _Style(chroma_scale=1.15, neutral_tint=0.7, chart_hue_step=144.0),
}
MOODS = tuple(_MOOD_STYLES)


class _Shades(NamedTuple):
    """Lightness (and fixed colours) of one mode."""

    background: float
    surface: float
    muted: float
    muted_text: float
    subtle: float
    border: float
    input: float
    ring: float
    sidebar: float
    brand: tuple[float, float]
    destructive: _Lch
    charts: tuple[float, float, float, float, float]


# Chart lightnesses are 0.09 apart, so any two charts are further apart in Oklab
# than CHART_MIN_DELTA_E whatever their hues and however the gamut cuts chroma.
_LIGHT = _Shades(
    background=0.985,
    surface=0.995,
    muted=0.955,
    muted_text=0.5,
    subtle=0.94,
    border=0.91,
    input=0.91,
    ring=0.7,
    sidebar=0.97,
    brand=(0.0, 0.8),
    destructive=(0.577, 0.245, 27.325),
    charts=(0.62, 0.53, 0.44, 0.8, 0.71),
)
_DARK = _Shades(
    background=0.16,
    surface=0.21,
    muted=0.27,
    muted_text=0.71,
    subtle=0.3,
    border=0.3,
    input=0.33,
    ring=0.56,
    sidebar=0.2,
    brand=(0.55, 1.0),
    destructive=(0.704, 0.191, 22.216),
    charts=(0.59, 0.68, 0.77, 0.5, 0.86),
)
_LIGHT_TEXT = 0.985
_DARK_TEXT = 0.18
_MAX_NEUTRAL_CHROMA = 0.02
_TINT_CHROMA = 0.05
_RING_CHROMA = 0.12
_CHART_CHROMA = 0.16
# Below this chroma a colour reads as grey and its hue is noise.
_GREY_CHROMA = 0.02
# Greys have no hue of their own to lead the charts; blue is a calm default.
_GREY_CHART_HUE = 250.0
_MIN_HUE_GAP = 30.0


class _Palette(NamedTuple):
    primary: _Lch
    secondary: _Lch | None
    accent: _Lch | None
    chroma_scale: float
    neutral_hue: float
    neutral_chroma: float
    chart_hues: tuple[float, ...]


def generate_theme(
    primary: str,
    *,
    secondary: str | None = None,
    accent: str | None = None,
    intent: Mapping[str, object] | None = None,
) -> dict[str, dict[str, str]]:
    """Return all 31 tokens for light and dark mode, in sRGB and at 4.5:1 for every pair."""
    palette = _palette(
        hex_to_lch(primary),
        hex_to_lch(secondary) if secondary is not None else None,
        hex_to_lch(accent) if accent is not None else None,
        intent if isinstance(intent, Mapping) else {},
    )
    return {"light": _mode(palette, _LIGHT), "dark": _mode(palette, _DARK)}


def _palette(primary: _Lch, secondary: _Lch | None, accent: _Lch | None, intent: Mapping[str, object]) -> _Palette:
    mood = intent.get("mood")
    style = _MOOD_STYLES.get(mood.lower(), _DEFAULT_STYLE) if isinstance(mood, str) else _DEFAULT_STYLE
    chroma_scale = _number(intent, "chromaScale", 0.5, 1.5, style.chroma_scale)
    neutral_tint = _number(intent, "neutralTint", 0.0, 1.0, style.neutral_tint)
    neutral_hue = _number(intent, "neutralHue", -math.inf, math.inf, primary[2]) % 360
    lead_hue = primary[2] if primary[1] >= _GREY_CHROMA else _GREY_CHART_HUE
    brand_hues = [colour[2] for colour in (secondary, accent) if colour and colour[1] >= _GREY_CHROMA]
    return _Palette(
        primary=primary,
        secondary=secondary,
        accent=accent,
        chroma_scale=chroma_scale,
        neutral_hue=neutral_hue,
        neutral_chroma=_MAX_NEUTRAL_CHROMA * neutral_tint * chroma_scale,
        chart_hues=_chart_hues(lead_hue, brand_hues, style.chart_hue_step),
    )


def _number(intent: Mapping[str, object], key: str, low: float, high: float, default: float) -> float:
    value = intent.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return default
    try:
        number = float(value)
    except OverflowError:
        return default
    return min(max(number, low), high) if math.isfinite(number) else default


def _chart_hues(lead: float, brand_hues: list[float], step: float) -> tuple[float, ...]:
    spread = [(lead + step * k) % 360 for k in range(1, 5)]
    hues = [lead]
    for hue in brand_hues + spread:
        if len(hues) < 5 and all(_hue_gap(hue, other) >= _MIN_HUE_GAP for other in hues):
            hues.append(hue)
    # Brand hues can crowd out spread ones; lightness still keeps the charts apart.
    hues += spread[: 5 - len(hues)]
    return tuple(hues)


def _hue_gap(a: float, b: float) -> float:
    gap = abs(a - b) % 360
    return min(gap, 360 - gap)


def _mode(palette: _Palette, shades: _Shades) -> dict[str, str]:
    def neutral(lightness: float, weight: float = 1.0) -> str:
        return fit_value(lightness, palette.neutral_chroma * weight, palette.neutral_hue)

    def tint(lightness: float, colour: _Lch, cap: float) -> str:
        return fit_value(lightness, min(colour[1], cap) * palette.chroma_scale, colour[2])

    def brand(colour: _Lch) -> str:
        low, high = shades.brand
        return fit_value(min(max(colour[0], low), high), colour[1], colour[2])

    def text_on(background: str) -> str:
        light, dark = neutral(_LIGHT_TEXT, 0.5), neutral(_DARK_TEXT, 1.5)
        best = max((light, dark), key=lambda text: contrast(background, text))
        return readable_foreground(background, best)

    background = neutral(shades.background, 0.5)
    surface = neutral(shades.surface, 0.3)
    primary = brand(palette.primary)
    secondary = brand(palette.secondary) if palette.secondary else tint(shades.subtle, palette.primary, _TINT_CHROMA)
    accent = tint(shades.subtle, palette.accent or palette.primary, _TINT_CHROMA)
    muted = neutral(shades.muted)
    sidebar = neutral(shades.sidebar)
    border = neutral(shades.border)
    ring = tint(shades.ring, palette.primary, _RING_CHROMA)
    charts = [
        fit_value(lightness, _CHART_CHROMA * palette.chroma_scale, hue)
        for lightness, hue in zip(shades.charts, palette.chart_hues, strict=True)
    ]
    tokens = {
        "background": background,
        "foreground": text_on(background),
        "card": surface,
        "card-foreground": text_on(surface),
        "popover": surface,
        "popover-foreground": text_on(surface),
        "primary": primary,
        "primary-foreground": text_on(primary),
        "secondary": secondary,
        "secondary-foreground": text_on(secondary),
        "muted": muted,
        "muted-foreground": readable_foreground(muted, neutral(shades.muted_text, 1.5)),
        "accent": accent,
        "accent-foreground": text_on(accent),
        "destructive": fit_value(*shades.destructive),
        "border": border,
        "input": neutral(shades.input),
        "ring": ring,
        **{f"chart-{index}": chart for index, chart in enumerate(charts, start=1)},
        "sidebar": sidebar,
        "sidebar-foreground": text_on(sidebar),
        "sidebar-primary": primary,
        "sidebar-primary-foreground": text_on(primary),
        "sidebar-accent": accent,
        "sidebar-accent-foreground": text_on(accent),
        "sidebar-border": border,
        "sidebar-ring": ring,
    }
    return {name: tokens[name] for name in TOKEN_NAMES}
