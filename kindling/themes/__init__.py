"""Pure theme engine: the 31 shadcn/ui colour tokens, generation, contrast repair and CSS."""

from .contrast import MIN_CONTRAST, check_theme, contrast
from .css import theme_css
from .palette import CHART_MIN_DELTA_E, MOODS, generate_theme
from .preview import CONTENT_SECURITY_POLICY, theme_preview
from .srgb import parse_hex, to_hex
from .tokens import (
    CONTRAST_PAIRS,
    MODES,
    TOKEN_NAMES,
    VALUE_PATTERN,
    format_value,
    parse_value,
    validate_theme,
)

__all__ = [
    "CHART_MIN_DELTA_E",
    "CONTENT_SECURITY_POLICY",
    "CONTRAST_PAIRS",
    "MIN_CONTRAST",
    "MODES",
    "MOODS",
    "TOKEN_NAMES",
    "VALUE_PATTERN",
    "check_theme",
    "contrast",
    "format_value",
    "generate_theme",
    "parse_hex",
    "parse_value",
    "theme_css",
    "theme_preview",
    "to_hex",
    "validate_theme",
]
