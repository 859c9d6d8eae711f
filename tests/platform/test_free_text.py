"""Optional free text is stored trimmed, and as None when it was not given or is blank."""

from __future__ import annotations

import pytest

from kindling.platform import free_text


@pytest.mark.parametrize(
    ("given", "stored"),
    [(None, None), ("", None), (" \t\n ", None), ("  a note ", "a note"), ("two\nlines", "two\nlines")],
)
def test_optional_text_is_trimmed_and_blank_is_none(given, stored):
    assert free_text.optional(given) == stored
