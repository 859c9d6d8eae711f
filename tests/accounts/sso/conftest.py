"""The app of the single sign-on tests: given a SECRET_KEY, and allowed to reach the providers on loopback."""

from __future__ import annotations

import pytest

from kindling.accounts import oidc_client

SECRET_KEY = "test-secret-key-of-at-least-32-characters"


@pytest.fixture(autouse=True)
def sso_settings(settings_with):
    settings_with(secret_key=SECRET_KEY, webhook_allow_private_urls=True)
    oidc_client._keys.clear()
