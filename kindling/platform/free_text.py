"""Optional free text as it is stored: a note, a comment, a description, a reference."""

from __future__ import annotations


def optional(text: str | None) -> str | None:
    """`text` without the white space around it; None when it was not given or nothing is left."""
    return (text or "").strip() or None
