"""Themes derived from brand colours (with palette advice from the AI provider, or without),
theme checks, and each organization's saved theme."""

from __future__ import annotations

import logging
import typing

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session as DbSession
from sqlalchemy.orm import joinedload

from kindling import outbox, themes
from kindling.accounts.models import Organization
from kindling.branding import palette_intent
from kindling.branding.models import OrganizationTheme
from kindling.config import Settings
from kindling.consulting import clients
from kindling.errors import Forbidden, NotFound, ServiceUnavailable, dotted, field_error, refused
from kindling.platform.access import Principal
from kindling.platform.base import utcnow

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
    colours = _brand_colours(primary, secondary, accent)
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
    return themes.generate_theme(
        colours["primary"], secondary=colours["secondary"], accent=colours["accent"], intent=intent
    )


def derive(*, primary: str, secondary: str | None = None, accent: str | None = None) -> dict[str, dict[str, str]]:
    """Both modes of a theme for these brand colours, from the theme engine alone."""
    colours = _brand_colours(primary, secondary, accent)
    return themes.generate_theme(colours["primary"], secondary=colours["secondary"], accent=colours["accent"])


class BrandColours(typing.TypedDict):
    primary: str
    secondary: str | None
    accent: str | None


def _brand_colours(primary: str, secondary: str | None, accent: str | None) -> BrandColours:
    # #RGB becomes #rrggbb, so the provider and the engine see one spelling of each colour.
    return {
        "primary": themes.parse_hex(primary),
        "secondary": themes.parse_hex(secondary) if secondary is not None else None,
        "accent": themes.parse_hex(accent) if accent is not None else None,
    }


def check(*, theme: dict) -> dict:
    """The theme's failing contrast pairs and out-of-gamut values, with a repaired copy."""
    _require_valid(theme)
    return themes.check_theme(theme)


def save_theme(db: DbSession, *, consultant_id: str, organization_id: str, theme: dict) -> OrganizationTheme:
    """Make `theme` the organization's theme, in place of any before it (its consultants only)."""
    # An organization that is not the consultant's client and one that does not exist
    # are refused alike, so saving reveals nothing about other organizations.
    if not clients.is_client(db, consultant_id=consultant_id, organization_id=organization_id):
        raise Forbidden("You have no active client relationship with this organization")
    _require_valid(theme)
    modes = {mode: {name: theme[mode][name] for name in themes.TOKEN_NAMES} for mode in themes.MODES}
    try:
        with db.begin_nested():
            saved = _store(db, organization_id, consultant_id, modes)
    except IntegrityError:
        # Another request stored the organization's first theme after we looked; this save
        # replaces it like any later one.
        saved = _store(db, organization_id, consultant_id, modes)
    # The theme belongs to the organization: every consultant it is a client of hears of it.
    organization = db.get_one(Organization, organization_id)
    for client_of in clients.active_consultant_ids(db, organization_id=organization_id):
        outbox.emit(
            db,
            consultant_id=client_of,
            type="theme.updated",
            data={
                "organizationId": organization_id,
                "organizationName": organization.name,
                "theme": modes,
                "updatedAt": saved.updated_at,
            },
        )
    return saved


def _store(db: DbSession, organization_id: str, consultant_id: str, modes: dict) -> OrganizationTheme:
    saved = db.get(OrganizationTheme, organization_id, with_for_update=True)
    if saved is None:
        saved = OrganizationTheme(organization_id=organization_id)
        db.add(saved)
    saved.light, saved.dark = modes["light"], modes["dark"]
    saved.updated_at, saved.updated_by = utcnow(), consultant_id
    db.flush()
    return saved


def get_theme(db: DbSession, *, caller: Principal, organization_id: str) -> OrganizationTheme:
    """The organization's saved theme, for its members and the consultants it is a client of."""
    # One answer for an organization the caller may not see and one that does not exist.
    if not _may_read(db, caller, organization_id):
        raise NotFound("No such organization")
    saved = db.scalar(
        select(OrganizationTheme)
        .where(OrganizationTheme.organization_id == organization_id)
        .options(joinedload(OrganizationTheme.organization, innerjoin=True))
    )
    if saved is None:
        raise NotFound("This organization has no saved theme yet")
    return saved


def _may_read(db: DbSession, caller: Principal, organization_id: str) -> bool:
    if caller.is_consultant:
        return clients.is_client(db, consultant_id=caller.user_id, organization_id=organization_id)
    return caller.organization_id == organization_id


# What each kind of problem `themes.validate_theme` finds asks the client to fix.
_PROBLEMS = {
    "missing": "is required: a theme has the same 31 colour names in light and dark",
    "unknown": "is not a colour name of the theme",
    "invalid": "must be an 'L C H' value (L 0-1, C 0-0.5, H 0-360)",
}


def _require_valid(theme: dict) -> None:
    problems = themes.validate_theme(theme)
    if problems:
        errors = [
            field_error("body", dotted(("theme", mode, name)), _PROBLEMS[kind])
            for mode in themes.MODES
            for kind, names in problems.get(mode, {}).items()
            for name in names
        ]
        errors += [
            field_error("body", dotted(("theme", mode)), "is not a mode: a theme has light and dark")
            for mode in problems.get("unknown", [])
        ]
        raise refused(errors)
