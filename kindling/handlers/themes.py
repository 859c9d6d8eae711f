"""Colour themes for client organizations."""

from __future__ import annotations

from kindling import access
from kindling.runtime import runtime
from kindling.services import themes


def generate_theme(body: dict, token_info: dict):
    access.consultant(token_info)
    theme = themes.generate(
        settings=runtime().settings,
        primary=body["primaryColor"],
        secondary=body.get("secondaryColor"),
        accent=body.get("accentColor"),
        context=body.get("context"),
    )
    return {"success": True, "theme": theme}, 200


def check_theme(body: dict, token_info: dict):
    access.consultant(token_info)
    return {"data": themes.check(theme=body["theme"])}, 200
