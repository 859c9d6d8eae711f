"""Fixtures of the platform's tests."""

from __future__ import annotations

import os

import pytest

from kindling.platform.database import make_engine


@pytest.fixture
def engine(tmp_path):
    """An engine of the test backend's own, as the app makes one: the test database on
    PostgreSQL, a new SQLite file otherwise."""
    url = os.environ.get("TEST_DATABASE_URL") or f"sqlite:///{tmp_path / 'platform.db'}"
    engine = make_engine(url)
    yield engine
    engine.dispose()
