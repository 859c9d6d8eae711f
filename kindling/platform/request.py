"""The request helpers every feature's handlers use: the running app's state, the request's
database session, and the limits a request's body keeps to."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TypeAlias

import flask
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from kindling.config import Settings
from kindling.platform.cache import Cache
from kindling.platform.health import DatabaseProbe
from kindling.platform.mail import Mailer
from kindling.platform.ratelimit import RateLimiter

EXTENSION = "kindling"
# Where a request keeps, in flask.g, an Idempotency-Key's attempt, whose answer it stores in the
# request's transaction once the handler has answered (kindling/web/idempotency.py).
KEYED = "idempotency"
# A file a request uploads (a bulk invite's CSV) is at most this large.
UPLOAD_LIMIT = 1024 * 1024

# What a handler returns for Connexion to answer with: a body (JSON, or text such as CSS or HTML),
# alone or with its status and then its headers, or a response made whole. Connexion's `NoContent`,
# the body of an empty answer, is untyped, so it fits wherever a body does.
Reply: TypeAlias = dict | str | tuple[dict | str, int] | tuple[dict | str, int, Mapping[str, str]] | flask.Response


@dataclasses.dataclass
class Runtime:
    settings: Settings
    engine: Engine
    database_probe: DatabaseProbe
    session_factory: sessionmaker[Session]
    cache: Cache
    limiter: RateLimiter
    # None without SMTP_URL: requests that must send mail answer 503 `mail_unavailable`.
    mailer: Mailer | None = None


def runtime() -> Runtime:
    """The running app's settings, database, cache, limiter and mailer."""
    return flask.current_app.extensions[EXTENSION]


def db() -> Session:
    """The request's database session, opened on first use."""
    if "db" not in flask.g:
        flask.g.db = runtime().session_factory()
    return flask.g.db


def may_commit() -> bool:
    """Whether a handler may commit the request's transaction itself, before it answers: not
    when the request still writes in it afterwards (an Idempotency-Key's answer)."""
    return KEYED not in flask.g
