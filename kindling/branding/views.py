"""Handlers of an organization's theme, its CSS and its preview."""

from __future__ import annotations

from kindling.branding import service as themes
from kindling.platform import access
from kindling.platform.request import Reply, db, runtime
from kindling.themes import CONTENT_SECURITY_POLICY, theme_css, theme_preview


def generate_theme(body: dict, token_info: dict) -> Reply:
    access.principal(token_info)
    theme = themes.generate(
        settings=runtime().settings,
        primary=body["primaryColor"],
        secondary=body.get("secondaryColor"),
        accent=body.get("accentColor"),
        context=body.get("context"),
    )
    return {"success": True, "theme": theme}, 200


def derive_theme(body: dict, token_info: dict) -> Reply:
    access.principal(token_info)
    theme = themes.derive(
        primary=body["primaryColor"], secondary=body.get("secondaryColor"), accent=body.get("accentColor")
    )
    return {"success": True, "theme": theme}, 200


def check_theme(body: dict, token_info: dict) -> Reply:
    access.principal(token_info)
    return {"data": themes.check(theme=body["theme"])}, 200


def save_theme(body: dict, token_info: dict) -> Reply:
    caller = access.principal(token_info)
    saved = themes.save_theme(
        db(), consultant_id=caller.user_id, organization_id=body["organizationId"], theme=body["theme"]
    )
    return {"success": True, "message": "Theme saved", "organizationId": saved.organization_id}, 200


def get_theme(organization_id: str, token_info: dict) -> Reply:
    saved = themes.get_theme(db(), caller=access.principal(token_info), organization_id=organization_id)
    return {
        "data": {"organizationId": saved.organization_id, "theme": saved.as_theme(), "updatedAt": saved.updated_at}
    }, 200


def get_theme_css(organization_id: str, token_info: dict) -> Reply:
    saved = themes.get_theme(db(), caller=access.principal(token_info), organization_id=organization_id)
    return theme_css(saved.as_theme()), 200, {"Content-Type": "text/css"}


def preview_theme(organization_id: str, token_info: dict) -> Reply:
    saved = themes.get_theme(db(), caller=access.principal(token_info), organization_id=organization_id)
    page = theme_preview(
        saved.as_theme(),
        title=f"Theme preview: {saved.organization.name}",
        subtitle=f"Saved {saved.updated_at.isoformat(timespec='seconds')}",
    )
    headers = {"Content-Type": "text/html", "Content-Security-Policy": CONTENT_SECURITY_POLICY}
    return page, 200, headers
