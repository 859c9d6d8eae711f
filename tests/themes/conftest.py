"""The theme the theme tests check, save and read."""

from __future__ import annotations

import pytest

from kindling.themes import generate_theme


@pytest.fixture(scope="module")
def theme():
    return generate_theme("#3366ff", accent="#f59e0b")
