"""Theme generation with palette advice from the AI provider, and theme checks."""

from __future__ import annotations

import logging

from kindling import palette_intent, themes
from kindling.config import Settings
from kindling.errors import BadRequest, ServiceUnavailable

log = logging.getLogger(__name__)


def generate(
    *,
    settings: Settings,
    primary: str,
    secondary: str | None = None,
    accent: str | None = None,
    context: str | None = None,
) -> dict[str, dict[str, str]]:
    """Both modes of a theme for these brand colours, shaped by the provider's palette intent."""
    # #RGB becomes #rrggbb, so the provider sees one spelling of each colour.
    colours = {
        "primary": themes.parse_hex(primary),
        "secondary": themes.parse_hex(secondary) if secondary is not None else None,
        "accent": themes.parse_hex(accent) if accent is not None else None,
    }
    if not settings.ai_provider_api_key:
        raise ServiceUnavailable("Theme generation is not available: no AI provider is configured")
    provider = palette_intent.Provider(
        base_url=settings.ai_provider_base_url,
        api_key=settings.ai_provider_api_key,
        model=settings.ai_provider_model,
    )
    try:
        intent = palette_intent.ask_intent(provider, context=context, **colours)
    except palette_intent.ProviderRefusedKey as exc:
        log.error("AI provider refused AI_PROVIDER_API_KEY: %s", exc)
        raise ServiceUnavailable("The AI provider is unavailable; try again later") from None
    except palette_intent.ProviderUnavailable as exc:
        log.warning("AI provider unavailable: %s", exc)
        raise ServiceUnavailable("The AI provider is unavailable; try again later") from None
    except palette_intent.UnusableAnswer as exc:
        log.warning("AI provider answer unusable, generating from the colours alone: %s", exc)
        intent = None
    return themes.generate_theme(colours["primary"], secondary=colours["secondary"], accent=colours["accent"], intent=intent)


def check(*, theme: dict) -> dict:
    """The theme's failing contrast pairs and out-of-gamut values, with a repaired copy."""
    problems = themes.validate_theme(theme)
    if problems:
        raise BadRequest(
            f"A theme needs exactly the {len(themes.TOKEN_NAMES)} colour names in light and dark, "
            "each an 'L C H' value (L 0-1, C 0-0.5, H 0-360)",
            details=problems,
        )
    return themes.check_theme(theme)

