"""JSON responses encoded by orjson keep what Connexion's standard-library encoder produced."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import uuid

import flask
from connexion.jsonifier import JSONEncoder

from kindling.web.overrides.json_encoding import OrjsonJsonifier, OrjsonProvider

VALUE = {
    "at": dt.datetime(2024, 3, 1, 12, 30, 5, 250, tzinfo=dt.UTC),
    "whole": dt.datetime(2024, 3, 1, tzinfo=dt.UTC),
    "day": dt.date(2024, 3, 1),
    "id": uuid.UUID("12345678-1234-5678-1234-567812345678"),
    "amount": decimal.Decimal("12.50"),
    "score": 3.0,
    "half": 2.5,
    "byLevel": {1: 2, 2: 0},
    "text": 'ünïcode \u2028 "quoted"',
    "none": None,
}


def test_jsonifier_encodes_as_connexion_did_compactly():
    encoded = OrjsonJsonifier().dumps(VALUE)
    assert isinstance(encoded, bytes)
    assert json.loads(encoded) == json.loads(json.dumps(VALUE, cls=JSONEncoder))
    assert b'"at":"2024-03-01T12:30:05.000250+00:00"' in encoded and b'"score":3.0' in encoded
    assert b": " not in encoded and not encoded.endswith(b"\n")


def test_naive_datetimes_are_utc():
    encoded = json.loads(OrjsonJsonifier().dumps({"at": dt.datetime(2024, 3, 1, 12)}))
    assert dt.datetime.fromisoformat(encoded["at"]) == dt.datetime(2024, 3, 1, 12, tzinfo=dt.UTC)


def test_flask_provider_returns_text_and_takes_the_standard_arguments():
    app = flask.Flask(__name__)
    app.json = OrjsonProvider(app)
    with app.app_context():
        text = flask.json.dumps(VALUE, indent=2, sort_keys=True)
        assert isinstance(text, str) and json.loads(text)["amount"] == 12.5
        assert flask.json.loads(b'{"a": [1, 2]}') == {"a": [1, 2]}
        response = flask.jsonify(VALUE)
    assert response.mimetype == "application/json" and response.get_json()["id"] == str(VALUE["id"])


def test_responses_are_encoded_by_orjson(client, app):
    assert isinstance(app.app.json, OrjsonProvider)
    response = client.get("/api/health")
    assert response.status_code == 200
    # Connexion's own jsonifier ends every body with a newline; orjson's output has none.
    assert not response.content.endswith(b"\n") and b'": ' not in response.content
    dt.datetime.fromisoformat(response.json()["timestamp"])
