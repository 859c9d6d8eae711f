"""Theme token names, the "L C H" value format and theme validation."""

import math
import re
from collections.abc import Mapping

TOKEN_NAMES = (
    "background",
    "foreground",
    "card",
    "card-foreground",
    "popover",
    "popover-foreground",
    "primary",
    "primary-foreground",
    "secondary",
    "secondary-foreground",
    "muted",
    "muted-foreground",
    "accent",
    "accent-foreground",
    "destructive",
    "border",
    "input",
    "ring",
    "chart-1",
    "chart-2",
    "chart-3",
    "chart-4",
    "chart-5",
    "sidebar",
    "sidebar-foreground",
    "sidebar-primary",
    "sidebar-primary-foreground",
    "sidebar-accent",
    "sidebar-accent-foreground",
    "sidebar-border",
    "sidebar-ring",
)

MODES = ("light", "dark")

CONTRAST_PAIRS = (
    ("background", "foreground"),
    ("card", "card-foreground"),
    ("popover", "popover-foreground"),
    ("primary", "primary-foreground"),
    ("secondary", "secondary-foreground"),
    ("muted", "muted-foreground"),
    ("accent", "accent-foreground"),
    ("sidebar", "sidebar-foreground"),
    ("sidebar-primary", "sidebar-primary-foreground"),
    ("sidebar-accent", "sidebar-accent-foreground"),
)

# ASCII digits only: \d would also accept other scripts' digits.
VALUE_PATTERN = r"([0-9]+(?:\.[0-9]+)?) ([0-9]+(?:\.[0-9]+)?) ([0-9]+(?:\.[0-9]+)?)"
_VALUE = re.compile(VALUE_PATTERN)
_MAX_L, _MAX_C, _MAX_H = 1.0, 0.5, 360.0


def parse_value(value: str) -> tuple[float, float, float]:
    """Return (L, C, H) from an "L C H" value, raising ValueError if malformed or out of range."""
    match = _VALUE.fullmatch(value)
    if match is None:
        raise ValueError(f"not an 'L C H' value: {value!r}")
    l, c, h = (float(group) for group in match.groups())
    if l > _MAX_L or c > _MAX_C or h > _MAX_H:
        raise ValueError(f"out of range (L <= 1, C <= 0.5, H <= 360): {value!r}")
    return l, c, h


def format_value(l: float, c: float, h: float) -> str:
    """Return the "L C H" value for OKLCH coordinates, clamped to range and rounded (L, C 4 places, H 2)."""
    l = min(max(l, 0.0), _MAX_L)
    c = min(max(c, 0.0), _MAX_C)
    # A hue means nothing once chroma rounds to zero; NaN is coloraide's "no hue".
    h = 0.0 if round(c, 4) == 0 or math.isnan(h) else round(h % _MAX_H, 2) % _MAX_H
    return f"{_decimal(l, 4)} {_decimal(c, 4)} {_decimal(h, 2)}"


def _decimal(number: float, places: int) -> str:
    # abs() turns a rounded -0.0 into 0.0 so no minus sign reaches the regex.
    return f"{abs(round(number, places)):.{places}f}".rstrip("0").rstrip(".")


def validate_theme(theme: object) -> dict:
    """Return the problems of a {"light": {...}, "dark": {...}} theme per mode; empty when valid."""
    if not isinstance(theme, Mapping):
        theme = {}
    problems: dict = {}
    for mode in MODES:
        tokens = theme.get(mode)
        mode_problems = _token_problems(tokens if isinstance(tokens, Mapping) else {})
        if mode_problems:
            problems[mode] = mode_problems
    unknown_modes = sorted(str(mode) for mode in theme if mode not in MODES)
    if unknown_modes:
        problems["unknown"] = unknown_modes
    return problems


def _token_problems(tokens: Mapping) -> dict[str, list[str]]:
    known = set(TOKEN_NAMES)
    found = {
        "missing": [name for name in TOKEN_NAMES if name not in tokens],
        "unknown": sorted(str(name) for name in tokens if name not in known),
        "invalid": [name for name in TOKEN_NAMES if name in tokens and not _is_value(tokens[name])],
    }
    return {kind: names for kind, names in found.items() if names}


def _is_value(value: object) -> bool:
    if not isinstance(value, str):
        return False
    try:
        parse_value(value)
    except ValueError:
        return False
    return True
