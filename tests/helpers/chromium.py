"""Headless Chromium, which the tests run to see pages as a browser shows them."""

from __future__ import annotations

import shutil

import pytest

# Headless in a container (which is the sandbox), and quiet: no first-run, update, sync or other traffic of its own.
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium(needed_to: str) -> str:
    """The Chromium binary; without one the test fails, saying what it was `needed_to` do."""
    found = shutil.which("chromium")
    if found is None:
        pytest.fail(f"Chromium is needed to {needed_to}: run scripts/test-prerequisites")
    return found
