"""Flask hooks around every request: the request owns its one transaction, and a form keeps its
exact bytes."""

from __future__ import annotations

import flask

from kindling.platform.request import EXTENSION, Runtime


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
        # The environ first: most requests carry no body, and parsing no header costs nothing.
        if flask.request.environ.get("CONTENT_TYPE") and flask.request.mimetype == "application/x-www-form-urlencoded":
            # Werkzeug then parses the form from these cached bytes, not from the spent stream.
            flask.request.get_data(cache=True, parse_form_data=False)
