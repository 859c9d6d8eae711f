"""Fixtures of the kindness tests."""

from __future__ import annotations

import pytest

from tests.factories.kindness import KindnessFactory


@pytest.fixture
def acts(db, runtime) -> KindnessFactory:
    """Kindness acts recorded in the test's transaction."""
    return KindnessFactory(db, runtime.cache)
