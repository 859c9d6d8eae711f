"""Text no database column can store: NUL (PostgreSQL text refuses it) and unpaired UTF-16
surrogates (a JSON escape such as \\ud800 alone, which no UTF-8 encoder accepts)."""

from __future__ import annotations

import re

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def carries_unstorable_text(value: object) -> bool:
    """True when a string anywhere in the parsed JSON `value`, key or item, cannot be stored."""
    if isinstance(value, str):
        return _UNSTORABLE.search(value) is not None
    if isinstance(value, dict):
        return any(carries_unstorable_text(key) or carries_unstorable_text(item) for key, item in value.items())
    if isinstance(value, list):
        return any(carries_unstorable_text(item) for item in value)
    return False
