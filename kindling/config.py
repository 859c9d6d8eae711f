"""Settings, read once from the environment (12-factor)."""

from __future__ import annotations

import dataclasses
import ipaddress
import os
import re
import typing
import urllib.parse
from collections.abc import Mapping

ENVIRONMENTS = ("development", "test", "staging", "production")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
DEFAULT_DATABASE_URL = "sqlite:///kindling.db"
DEFAULT_AI_PROVIDER_BASE_URL = "https://api.openai.com/v1"
DEFAULT_AI_PROVIDER_MODEL = "gpt-4o-mini"
DEFAULT_SLACK_API_BASE_URL = "https://slack.com/api/"


class ConfigError(ValueError):
    """A configuration value is missing or malformed; the message is one line."""


@dataclasses.dataclass(frozen=True)
class Settings:
    """Everything Kindling can be configured with."""

    database_url: str = DEFAULT_DATABASE_URL
    redis_url: str | None = None
    # Sentinels (host, port) that name the Redis master of `redis_sentinel_service`, in place of
    # `redis_url`: after a failover they name the promoted replica.
    redis_sentinels: tuple[tuple[str, int], ...] = ()
    redis_sentinel_service: str | None = None
    secret_key: str | None = None
    environment: str = "development"
    strict_health_check: bool = False
    debug_health_check: bool = False
    ai_provider_api_key: str | None = None
    ai_provider_base_url: str = DEFAULT_AI_PROVIDER_BASE_URL
    ai_provider_model: str = DEFAULT_AI_PROVIDER_MODEL
    payment_webhook_secret: str | None = None
    auth_webhook_secret: str | None = None
    # Lets webhook endpoints point at loopback and private networks (tests, closed networks).
    webhook_allow_private_urls: bool = False
    # Where people reach this server (`https://kindling.example.com`); single sign-on's redirect
    # URI is made from it. Unset: from each request's own URL.
    public_url: str | None = None
    rate_limit_multiplier: float = 1.0
    log_level: str = "INFO"
    # Wellbeing comments older than this are deleted by `kindling worker` (docs/decisions.md §15).
    wellbeing_comment_retention_days: int = 365
    # The Ed25519 key evidence is signed with (PEM, or a base64 seed) and the base64 public keys
    # it was signed with before, as written: kindling.evidence.signing parses them.
    evidence_signing_key: str | None = None
    evidence_previous_keys: str = ""
    # The mail server attestations are sent through (smtp:// with STARTTLS when offered, or
    # smtps://) and the sender they come from; their /attest links point to `public_url`.
    smtp_url: str | None = None
    mail_from: str | None = None
    # Seconds the mail server has to answer each step; tests shorten it, so it is not read from the environment.
    mail_timeout: float = 10.0
    # The Slack app (docs/decisions.md §17): its OAuth client, the secret Slack signs requests
    # with, and the Web API it calls (tests point it at a fake Slack on loopback).
    slack_client_id: str | None = None
    slack_client_secret: str | None = None
    slack_signing_secret: str | None = None
    slack_api_base_url: str = DEFAULT_SLACK_API_BASE_URL
    # Check every response against openapi.yaml. The test suite turns it on; it is not read from
    # the environment, since a production server should not spend its time on it.
    validate_responses: bool = False
    # Swagger UI at /api/ui/ and the spec at /api/openapi.json, for people exploring the API.
    api_docs: bool = True
    # The DNS resolvers (address, port) that domain verification asks; empty: the system's.
    dns_nameservers: tuple[tuple[str, int], ...] = ()
    # Seconds a domain's DNS lookup may take in all; tests shorten it, so it is not read from the environment.
    dns_timeout: float = 5.0

    @property
    def embedded(self) -> bool:
        """True when running on SQLite with in-process cache and limiter."""
        return self.database_url.startswith("sqlite")

    @property
    def redis_target(self) -> str | None:
        """Where the cache and the limiter find Redis: `redis_url`, or the Sentinels as a
        `redis+sentinel://host:port,…/service` URL (the form the `limits` library reads)."""
        if self.redis_sentinels:
            hosts = ",".join(f"{host}:{port}" for host, port in self.redis_sentinels)
            return f"redis+sentinel://{hosts}/{self.redis_sentinel_service}"
        return self.redis_url

    @property
    def production(self) -> bool:
        return self.environment == "production"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Build settings from environment variables, failing with one clear line."""
        env = os.environ if environ is None else environ

        @typing.overload
        def text(name: str) -> str | None: ...
        @typing.overload
        def text(name: str, default: str) -> str: ...
        def text(name: str, default: str | None = None) -> str | None:
            value = env.get(name, "").strip()
            return value or default

        database_url = text("DATABASE_URL", DEFAULT_DATABASE_URL)
        if not database_url.startswith(("sqlite", "postgresql")):
            raise ConfigError(
                f"DATABASE_URL must be a sqlite:// or postgresql+psycopg2:// URL, got {database_url.split(':', 1)[0]}://…"
            )
        redis_url = text("REDIS_URL")
        if redis_url and not redis_url.startswith(("redis://", "rediss://", "unix://")):
            raise ConfigError("REDIS_URL must start with redis://, rediss:// or unix://")
        sentinels, sentinel_service = _sentinels(text("REDIS_SENTINELS", ""), text("REDIS_SENTINEL_SERVICE"))
        if sentinels and redis_url:
            raise ConfigError("set REDIS_URL or REDIS_SENTINELS, not both")
        if database_url.startswith("postgresql"):
            _check_database_url(database_url)
        environment = text("ENVIRONMENT", "development")
        if environment not in ENVIRONMENTS:
            raise ConfigError(f"ENVIRONMENT must be one of {', '.join(ENVIRONMENTS)}, got {environment!r}")
        log_level = text("LOG_LEVEL", "INFO").upper()
        if log_level not in LOG_LEVELS:
            raise ConfigError(f"LOG_LEVEL must be one of {', '.join(LOG_LEVELS)}, got {log_level!r}")
        multiplier_text = text("RATE_LIMIT_MULTIPLIER", "1")
        try:
            multiplier = float(multiplier_text)
        except ValueError:
            multiplier = 0.0
        if not 0 < multiplier <= 1_000_000:
            raise ConfigError(f"RATE_LIMIT_MULTIPLIER must be a positive number, got {multiplier_text!r}")
        retention_text = text("WELLBEING_COMMENT_RETENTION_DAYS", "365")
        if not retention_text.isdigit() or not 1 <= int(retention_text) <= 36_500:
            raise ConfigError(
                f"WELLBEING_COMMENT_RETENTION_DAYS must be a whole number of days from 1 to 36500, got {retention_text!r}"
            )
        secret_key = text("SECRET_KEY")
        if environment == "production" and (secret_key is None or len(secret_key) < 32):
            raise ConfigError("SECRET_KEY of at least 32 characters is required when ENVIRONMENT=production")
        signing_key = text("EVIDENCE_SIGNING_KEY")
        if signing_key is None and environment == "production":
            raise ConfigError(
                "EVIDENCE_SIGNING_KEY (an Ed25519 private key: PEM, or a base64 32-byte seed) is required when ENVIRONMENT=production"
            )
        public_url = text("PUBLIC_URL")
        if public_url is not None:
            public_url = public_url.rstrip("/")
            if not re.fullmatch(r"https?://[^/?#@\s]+(/[^?#\s]*)?", public_url):
                raise ConfigError("PUBLIC_URL must be an http(s) URL without query, fragment or credentials")
            if environment == "production" and not public_url.startswith("https://"):
                raise ConfigError("PUBLIC_URL must use https when ENVIRONMENT=production")
        smtp_url, mail_from = _mail(text, public_url)
        slack = _slack(text, secret_key=secret_key, public_url=public_url, production=environment == "production")
        return cls(
            database_url=database_url,
            redis_url=redis_url,
            redis_sentinels=sentinels,
            redis_sentinel_service=sentinel_service,
            secret_key=secret_key,
            environment=environment,
            strict_health_check=_flag(env, "STRICT_HEALTH_CHECK"),
            debug_health_check=_flag(env, "DEBUG_HEALTH_CHECK"),
            ai_provider_api_key=text("AI_PROVIDER_API_KEY"),
            ai_provider_base_url=text("AI_PROVIDER_BASE_URL", DEFAULT_AI_PROVIDER_BASE_URL).rstrip("/"),
            ai_provider_model=text("AI_PROVIDER_MODEL", DEFAULT_AI_PROVIDER_MODEL),
            payment_webhook_secret=text("PAYMENT_WEBHOOK_SECRET"),
            auth_webhook_secret=text("AUTH_WEBHOOK_SECRET"),
            webhook_allow_private_urls=_flag(env, "WEBHOOK_ALLOW_PRIVATE_URLS"),
            public_url=public_url,
            rate_limit_multiplier=multiplier,
            log_level=log_level,
            wellbeing_comment_retention_days=int(retention_text),
            evidence_signing_key=signing_key,
            evidence_previous_keys=text("EVIDENCE_PREVIOUS_KEYS", ""),
            smtp_url=smtp_url,
            mail_from=mail_from,
            **slack,
            api_docs=_flag(env, "API_DOCS", default=environment in ("development", "test")),
            dns_nameservers=_nameservers(text("DNS_NAMESERVERS", "")),
        )


def _nameservers(value: str) -> tuple[tuple[str, int], ...]:
    """DNS_NAMESERVERS: comma-separated `address[:port]` (an IPv6 address with a port in brackets,
    `[2001:db8::53]:5353`); port 53 when none is given. Addresses only: a resolver's own name
    would need a resolver to find it."""
    servers = []
    for item in (part.strip() for part in value.split(",")):
        if not item:
            continue
        host, port_text = item, "53"
        if item.startswith("["):
            host, _, rest = item[1:].partition("]")
            if rest:
                if not rest.startswith(":"):
                    raise ConfigError(f"DNS_NAMESERVERS: {item!r} is not address[:port]")
                port_text = rest[1:]
        elif item.count(":") == 1:
            host, port_text = item.split(":")
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            raise ConfigError(
                f"DNS_NAMESERVERS: {item!r} is not an IP address[:port] (an IPv6 address with a port goes in brackets)"
            ) from None
        if not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
            raise ConfigError(f"DNS_NAMESERVERS: {item!r} has a port that is not from 1 to 65535")
        servers.append((str(address), int(port_text)))
    return tuple(servers)


def _sentinels(value: str, service: str | None) -> tuple[tuple[tuple[str, int], ...], str | None]:
    """REDIS_SENTINELS (comma-separated host:port) and REDIS_SENTINEL_SERVICE, checked together."""
    sentinels = []
    for item in (part.strip() for part in value.split(",")):
        if not item:
            continue
        host, _, port_text = item.rpartition(":")
        if not re.fullmatch(r"[A-Za-z0-9.-]+", host) or not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
            raise ConfigError(f"REDIS_SENTINELS: {item!r} is not host:port with a port from 1 to 65535")
        sentinels.append((host, int(port_text)))
    if sentinels and not service:
        raise ConfigError(
            "REDIS_SENTINEL_SERVICE (the master's name the Sentinels monitor) is required with REDIS_SENTINELS"
        )
    if service and not sentinels:
        raise ConfigError("REDIS_SENTINELS (host:port,…) is required with REDIS_SENTINEL_SERVICE")
    if service and not re.fullmatch(r"[A-Za-z0-9._-]+", service):
        raise ConfigError(f"REDIS_SENTINEL_SERVICE must be letters, digits, '.', '_' or '-', got {service!r}")
    return tuple(sentinels), service


def _check_database_url(url: str) -> None:
    """A PostgreSQL URL SQLAlchemy can read. Several hosts go in its documented form,
    `postgresql+psycopg2://user@/db?host=h1:5432&host=h2:5432&target_session_attrs=read-write`;
    libpq's comma form (`@h1:5432,h2:5432/db`) is refused by SQLAlchemy with an unclear error."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        parsed = make_url(url)
        parsed.port  # noqa: B018 (it raises on a port that is not a number)
    except (ArgumentError, ValueError):
        raise ConfigError(
            "DATABASE_URL is not a URL SQLAlchemy reads; several hosts go as "
            "postgresql+psycopg2://user@/db?host=h1:5432&host=h2:5432&target_session_attrs=read-write"
        ) from None
    if parsed.drivername not in ("postgresql", "postgresql+psycopg2"):
        raise ConfigError(f"DATABASE_URL must use postgresql+psycopg2://, got {parsed.drivername}://…")


class _Text(typing.Protocol):
    """`from_env`'s reader of one variable: stripped, None or the default when unset or blank."""

    @typing.overload
    def __call__(self, name: str) -> str | None: ...
    @typing.overload
    def __call__(self, name: str, default: str) -> str: ...


def _mail(text: _Text, public_url: str | None) -> tuple[str | None, str | None]:
    """SMTP_URL and MAIL_FROM, checked together: mail needs a sender, and links that lead back here."""
    smtp_url, mail_from = text("SMTP_URL"), text("MAIL_FROM")
    if smtp_url is None:
        return None, mail_from
    smtp = urllib.parse.urlsplit(smtp_url)
    try:
        smtp.port  # noqa: B018 (it raises on a port that is not a number)
    except ValueError:
        raise ConfigError("SMTP_URL has a port that is not a number") from None
    if smtp.scheme not in ("smtp", "smtps") or not smtp.hostname or smtp.path not in ("", "/"):
        raise ConfigError("SMTP_URL must be smtp://[user:password@]host[:port] or smtps://…")
    if mail_from is None or "@" not in mail_from:
        raise ConfigError("MAIL_FROM (the address attestation mails come from) is required with SMTP_URL")
    # Never the request's Host: a requester could point the mailed link at a site of their own.
    if public_url is None:
        raise ConfigError("PUBLIC_URL (where the /attest links in attestation mails point) is required with SMTP_URL")
    return smtp_url, mail_from


def _slack(text: _Text, *, secret_key: str | None, public_url: str | None, production: bool) -> dict:
    """The Slack app's settings, checked together: all three credentials or none, with what installing needs."""
    credentials = {
        "SLACK_CLIENT_ID": text("SLACK_CLIENT_ID"),
        "SLACK_CLIENT_SECRET": text("SLACK_CLIENT_SECRET"),
        "SLACK_SIGNING_SECRET": text("SLACK_SIGNING_SECRET"),
    }
    base_url = text("SLACK_API_BASE_URL", DEFAULT_SLACK_API_BASE_URL)
    if not re.fullmatch(r"https?://[^/?#@\s]+(/[^?#\s]*)?", base_url):
        raise ConfigError("SLACK_API_BASE_URL must be an http(s) URL without query, fragment or credentials")
    if production and not base_url.startswith("https://"):
        raise ConfigError("SLACK_API_BASE_URL must use https when ENVIRONMENT=production")
    given = [name for name, value in credentials.items() if value is not None]
    if given and len(given) < len(credentials):
        missing = ", ".join(name for name in credentials if name not in given)
        raise ConfigError(
            f"The Slack app needs SLACK_CLIENT_ID, SLACK_CLIENT_SECRET and SLACK_SIGNING_SECRET; {missing} missing"
        )
    if given and (secret_key is None or len(secret_key) < 32):
        raise ConfigError(
            "SECRET_KEY of at least 32 characters is required with the Slack app: bot tokens are sealed under it"
        )
    if given and public_url is None:
        raise ConfigError(
            "PUBLIC_URL (Slack's OAuth redirect and request URLs point to it) is required with the Slack app"
        )
    return {
        "slack_client_id": credentials["SLACK_CLIENT_ID"],
        "slack_client_secret": credentials["SLACK_CLIENT_SECRET"],
        "slack_signing_secret": credentials["SLACK_SIGNING_SECRET"],
        "slack_api_base_url": base_url if base_url.endswith("/") else base_url + "/",
    }


def _flag(env: Mapping[str, str], name: str, *, default: bool = False) -> bool:
    value = env.get(name, "").strip().lower()
    if value == "":
        return default
    if value in ("0", "false", "no", "off"):
        return False
    if value in ("1", "true", "yes", "on"):
        return True
    raise ConfigError(f"{name} must be true or false, got {value!r}")
