"""WCAG 2.1 contrast of token values, and the check and repair of a theme's pairs."""

import math

from .srgb import color_of, fit_value, in_gamut
from .tokens import CONTRAST_PAIRS, MODES, TOKEN_NAMES, parse_value, validate_theme

MIN_CONTRAST = 4.5
_LIGHTNESS_STEP = 0.0001


def contrast(value_a: str, value_b: str) -> float:
    """Return the WCAG 2.1 contrast ratio of two "L C H" values."""
    return color_of(value_a).contrast(color_of(value_b), method="wcag21")


def readable_foreground(background: str, foreground: str) -> str:
    """Return the foreground, its lightness moved toward black or white just far enough for 4.5:1."""
    if contrast(background, foreground) >= MIN_CONTRAST:
        return foreground
    l, c, h = parse_value(foreground)
    # Moving further the way the foreground already lies is the smaller change;
    # black or white always reaches 4.5:1 (one of them reaches sqrt(21) at least).
    lighter = color_of(foreground).luminance() >= color_of(background).luminance()
    ends = (1.0, 0.0) if lighter else (0.0, 1.0)
    passing = next(end for end in ends if contrast(background, fit_value(end, c, h)) >= MIN_CONTRAST)
    failing, best = l, fit_value(passing, c, h)
    while abs(passing - failing) > _LIGHTNESS_STEP:
        middle = (failing + passing) / 2
        candidate = fit_value(middle, c, h)
        if contrast(background, candidate) >= MIN_CONTRAST:
            passing, best = middle, candidate
        else:
            failing = middle
    return best


def check_theme(theme: dict[str, dict[str, str]]) -> dict:
    """Report a valid theme's pairs under 4.5:1 and values outside sRGB, with a minimally repaired copy."""
    problems = validate_theme(theme)
    if problems:
        raise ValueError(f"invalid theme: {problems}")
    failing_pairs = []
    out_of_gamut = []
    repaired = {}
    for mode in MODES:
        tokens = theme[mode]
        for background, foreground in CONTRAST_PAIRS:
            ratio = contrast(tokens[background], tokens[foreground])
            if ratio < MIN_CONTRAST:
                failing_pairs.append(
                    {
                        "mode": mode,
                        "background": background,
                        "foreground": foreground,
                        # Rounded down, so a failing 4.497 never reads as a passing 4.5.
                        "contrast": math.floor(ratio * 100) / 100,
                    }
                )
        fitted = {}
        for name in TOKEN_NAMES:
            value = tokens[name]
            if not in_gamut(value):
                out_of_gamut.append({"mode": mode, "token": name, "value": value})
                value = fit_value(*parse_value(value))
            fitted[name] = value
        # Pairs are checked again after gamut mapping, which can lower a background's contrast.
        for background, foreground in CONTRAST_PAIRS:
            fitted[foreground] = readable_foreground(fitted[background], fitted[foreground])
        repaired[mode] = fitted
    return {"failingPairs": failing_pairs, "outOfGamut": out_of_gamut, "repaired": repaired}
