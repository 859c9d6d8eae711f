"""What one running app holds, and the database session each request owns."""

from __future__ import annotations

import dataclasses

import flask
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from kindling.config import Settings
from kindling.evidence.keys import Signer
from kindling.platform.cache import Cache
from kindling.platform.health import DatabaseProbe
from kindling.platform.mail import Mailer
from kindling.platform.ratelimit import RateLimiter

EXTENSION = "kindling"


@dataclasses.dataclass
class Runtime:
    settings: Settings
    engine: Engine
    database_probe: DatabaseProbe
    session_factory: sessionmaker[Session]
    cache: Cache
    limiter: RateLimiter
    signer: Signer
    # None without SMTP_URL: requests that must send mail answer 503 `mail_unavailable`.
    mailer: Mailer | None = None


def runtime() -> Runtime:
    """The running app's settings, database, cache, limiter, evidence signer and mailer."""
    return flask.current_app.extensions[EXTENSION]


def db() -> Session:
    """The request's database session, opened on first use."""
    if "db" not in flask.g:
        flask.g.db = runtime().session_factory()
    return flask.g.db


def own_request_transactions(flask_app: flask.Flask, state: Runtime) -> None:
    """Make the request the one owner of its transaction: commit once on success."""
    flask_app.extensions[EXTENSION] = state

    @flask_app.after_request
    def commit(response: flask.Response) -> flask.Response:
        session = flask.g.pop("db", None)
        if session is not None:
            try:
                # A request that only read from the cache never began a transaction.
                if session.in_transaction():
                    if response.status_code < 400:
                        session.commit()
                    else:
                        session.rollback()
            finally:
                session.close()
        return response

    @flask_app.teardown_request
    def close(_exc: BaseException | None) -> None:
        # Reached with the session still open only when the handler raised.
        session = flask.g.pop("db", None)
        if session is not None:
            session.rollback()
            session.close()


def keep_raw_form_bodies(flask_app: flask.Flask) -> None:
    """Keep a form's exact bytes for its handler: Connexion reads the form before calling it, and
    a signature (Slack's) covers the bytes as sent."""

    @flask_app.before_request
    def keep() -> None:
        if flask.request.mimetype == "application/x-www-form-urlencoded":
            # Werkzeug then parses the form from these cached bytes, not from the spent stream.
            flask.request.get_data(cache=True, parse_form_data=False)
