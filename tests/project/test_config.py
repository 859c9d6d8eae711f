"""Configuration from the environment, and the `kindling` command."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys

import pytest

from kindling.config import ConfigError, Settings

SLACK = {"SLACK_CLIENT_ID": "1.2", "SLACK_CLIENT_SECRET": "c", "SLACK_SIGNING_SECRET": "s"}


def test_zero_configuration_is_embedded():
    settings = Settings.from_env({})
    assert settings.embedded and settings.database_url == "sqlite:///kindling.db"
    assert settings.redis_url is None and settings.environment == "development"
    assert settings.rate_limit_multiplier == 1
    assert settings.wellbeing_comment_retention_days == 365
    assert Settings.from_env({"WELLBEING_COMMENT_RETENTION_DAYS": "30"}).wellbeing_comment_retention_days == 30


PRODUCTION_SECRETS = {"SECRET_KEY": "x" * 32, "EVIDENCE_SIGNING_KEY": "A" * 43 + "="}


def test_production_configuration():
    settings = Settings.from_env(
        {
            "DATABASE_URL": "postgresql+psycopg2://k@db/k",
            "REDIS_URL": "redis://cache:6379/0",
            "ENVIRONMENT": "production",
            **PRODUCTION_SECRETS,
            "STRICT_HEALTH_CHECK": "true",
            "RATE_LIMIT_MULTIPLIER": "2.5",
        }
    )
    assert not settings.embedded and settings.production and settings.strict_health_check
    assert settings.rate_limit_multiplier == 2.5


@pytest.mark.parametrize(
    "env, api_docs",
    [
        ({}, True),
        ({"ENVIRONMENT": "test"}, True),
        ({"ENVIRONMENT": "staging"}, False),
        ({"ENVIRONMENT": "production", **PRODUCTION_SECRETS}, False),
        ({"ENVIRONMENT": "production", **PRODUCTION_SECRETS, "API_DOCS": "true"}, True),
        ({"API_DOCS": "off"}, False),
    ],
)
def test_api_docs_are_served_in_development_and_only_when_asked_in_production(env, api_docs):
    assert Settings.from_env(env).api_docs is api_docs


@pytest.mark.parametrize(
    "env, mentions",
    [
        ({"DATABASE_URL": "mysql://x"}, "DATABASE_URL"),
        ({"API_DOCS": "maybe"}, "API_DOCS"),
        ({"REDIS_URL": "http://x"}, "REDIS_URL"),
        ({"ENVIRONMENT": "prod"}, "ENVIRONMENT"),
        ({"STRICT_HEALTH_CHECK": "maybe"}, "STRICT_HEALTH_CHECK"),
        ({"RATE_LIMIT_MULTIPLIER": "lots"}, "RATE_LIMIT_MULTIPLIER"),
        ({"RATE_LIMIT_MULTIPLIER": "-1"}, "RATE_LIMIT_MULTIPLIER"),
        ({"LOG_LEVEL": "chatty"}, "LOG_LEVEL"),
        ({"WELLBEING_COMMENT_RETENTION_DAYS": "0"}, "WELLBEING_COMMENT_RETENTION_DAYS"),
        ({"WELLBEING_COMMENT_RETENTION_DAYS": "a year"}, "WELLBEING_COMMENT_RETENTION_DAYS"),
        ({"ENVIRONMENT": "production"}, "SECRET_KEY"),
        ({"SMTP_URL": "http://mail.example.com"}, "SMTP_URL"),
        ({"SMTP_URL": "smtp://mail.example.com:port", "MAIL_FROM": "a@example.com"}, "SMTP_URL"),
        ({"SMTP_URL": "smtp://mail.example.com"}, "MAIL_FROM"),
        ({"SMTP_URL": "smtp://mail.example.com", "MAIL_FROM": "nobody"}, "MAIL_FROM"),
        ({"PUBLIC_URL": "kindling.example.com"}, "PUBLIC_URL"),
        ({"SMTP_URL": "smtps://mail.example.com", "MAIL_FROM": "a@example.com"}, "PUBLIC_URL"),
        ({"DNS_NAMESERVERS": "resolver.example.com"}, "DNS_NAMESERVERS"),
        ({"DNS_NAMESERVERS": "10.0.0.53:dns"}, "DNS_NAMESERVERS"),
        ({"DNS_NAMESERVERS": "10.0.0.53:65536"}, "DNS_NAMESERVERS"),
        ({"DNS_NAMESERVERS": "[2001:db8::53]5353"}, "DNS_NAMESERVERS"),
        ({"DNS_NAMESERVERS": "2001:db8::53:5353:x"}, "DNS_NAMESERVERS"),
        ({"SLACK_CLIENT_ID": "1.2"}, "SLACK_CLIENT_SECRET, SLACK_SIGNING_SECRET missing"),
        ({**SLACK, "PUBLIC_URL": "https://kindling.example.com"}, "SECRET_KEY"),
        ({**SLACK, "SECRET_KEY": "k" * 32}, "PUBLIC_URL"),
        ({"SLACK_API_BASE_URL": "slack.com/api"}, "SLACK_API_BASE_URL"),
        ({"SLACK_API_BASE_URL": "https://user:pw@slack.example/api/"}, "SLACK_API_BASE_URL"),
        (
            {
                "ENVIRONMENT": "production",
                "SECRET_KEY": "k" * 32,
                "EVIDENCE_SIGNING_KEY": "A" * 43 + "=",
                "SLACK_API_BASE_URL": "http://slack.example/api/",
            },
            "SLACK_API_BASE_URL must use https",
        ),
    ],
)
def test_bad_values_fail_with_one_line(env, mentions):
    with pytest.raises(ConfigError) as raised:
        Settings.from_env(env)
    assert mentions in str(raised.value) and "\n" not in str(raised.value)


def test_slack_settings():
    settings = Settings.from_env(
        {
            **SLACK,
            "SECRET_KEY": "k" * 32,
            "PUBLIC_URL": "https://kindling.example.com",
            "SLACK_API_BASE_URL": "http://127.0.0.1:9/api",
        }
    )
    assert (settings.slack_client_id, settings.slack_client_secret, settings.slack_signing_secret) == ("1.2", "c", "s")
    assert settings.slack_api_base_url == "http://127.0.0.1:9/api/"
    unset = Settings.from_env({})
    assert unset.slack_signing_secret is None and unset.slack_api_base_url == "https://slack.com/api/"


def test_mail_settings():
    settings = Settings.from_env(
        {
            "SMTP_URL": "smtp://user:p%40ss@mail.example.com:2525",
            "MAIL_FROM": "Kindling <attest@example.com>",
            "PUBLIC_URL": "https://kindling.example.com/",
        }
    )
    assert (settings.smtp_url, settings.mail_from) == (
        "smtp://user:p%40ss@mail.example.com:2525",
        "Kindling <attest@example.com>",
    )
    assert settings.public_url == "https://kindling.example.com" and settings.mail_timeout == 10
    unset = Settings.from_env({})
    assert (unset.smtp_url, unset.mail_from) == (None, None)


def test_dns_nameservers_are_addresses_with_optional_ports():
    assert Settings.from_env({}).dns_nameservers == ()  # the system's resolvers
    settings = Settings.from_env({"DNS_NAMESERVERS": " 10.0.0.53, 127.0.0.1:5353,[2001:db8::53]:5300 ,2001:db8::1,"})
    assert settings.dns_nameservers == (
        ("10.0.0.53", 53),
        ("127.0.0.1", 5353),
        ("2001:db8::53", 5300),
        ("2001:db8::1", 53),
    )


def run_cli(*args, **env):
    return subprocess.run(
        [sys.executable, "-m", "kindling.cli", *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_cli_reports_bad_configuration_in_one_line():
    result = run_cli("serve", RATE_LIMIT_MULTIPLIER="lots")
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0
    assert "RATE_LIMIT_MULTIPLIER" in result.stderr and "Traceback" not in result.stderr


def test_cli_refuses_workers_without_shared_state(tmp_path):
    result = run_cli("serve", "--workers", "2", DATABASE_URL=f"sqlite:///{tmp_path}/k.db", REDIS_URL="")
    assert result.returncode == 2
    assert "REDIS_URL" in result.stderr and result.stderr.strip().count("\n") == 0


def test_cli_db_upgrade_creates_the_schema(tmp_path):
    database = tmp_path / "fresh.db"
    result = run_cli("db", "upgrade", DATABASE_URL=f"sqlite:///{database}")
    assert result.returncode == 0, result.stderr

    with sqlite3.connect(database) as connection:
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"users", "organizations", "sessions", "alembic_version"} <= tables


def test_multi_host_database_url_in_sqlalchemys_form():
    url = "postgresql+psycopg2://kindling@/kindling?host=db1:5432&host=db2:5432&target_session_attrs=read-write"
    assert Settings.from_env({"DATABASE_URL": url}).database_url == url
    # libpq's comma form, which SQLAlchemy cannot read, fails at start with the form that works.
    with pytest.raises(ConfigError, match=r"host=h1:5432&host=h2:5432"):
        Settings.from_env({"DATABASE_URL": "postgresql+psycopg2://kindling@db1:5432,db2:5432/kindling"})
    with pytest.raises(ConfigError, match="postgresql\\+psycopg2"):
        Settings.from_env({"DATABASE_URL": "postgresql+asyncpg://kindling@db1/kindling"})


def test_redis_sentinels_stand_in_for_redis_url():
    settings = Settings.from_env(
        {"REDIS_SENTINELS": "10.0.0.1:26379, s2.internal:26380", "REDIS_SENTINEL_SERVICE": "kindling"}
    )
    assert settings.redis_sentinels == (("10.0.0.1", 26379), ("s2.internal", 26380))
    assert settings.redis_target == "redis+sentinel://10.0.0.1:26379,s2.internal:26380/kindling"
    assert Settings.from_env({"REDIS_URL": "redis://r:6379/0"}).redis_target == "redis://r:6379/0"
    for env, mentions in [
        ({"REDIS_SENTINELS": "s1:26379"}, "REDIS_SENTINEL_SERVICE"),
        ({"REDIS_SENTINEL_SERVICE": "kindling"}, "REDIS_SENTINELS"),
        ({"REDIS_SENTINELS": "s1", "REDIS_SENTINEL_SERVICE": "kindling"}, "host:port"),
        ({"REDIS_SENTINELS": "s1:0", "REDIS_SENTINEL_SERVICE": "kindling"}, "host:port"),
        ({"REDIS_SENTINELS": "s1:26379", "REDIS_SENTINEL_SERVICE": "a b"}, "REDIS_SENTINEL_SERVICE"),
        ({"REDIS_SENTINELS": "s1:26379", "REDIS_SENTINEL_SERVICE": "k", "REDIS_URL": "redis://r"}, "not both"),
    ]:
        with pytest.raises(ConfigError, match=mentions):
            Settings.from_env(env)
