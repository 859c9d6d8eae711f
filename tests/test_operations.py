"""Each operation builds Connexion's decorator chain once, not on every request."""

from connexion.apps.flask import FlaskOperation


def test_an_operation_builds_its_decorators_on_its_first_request_only(app, client):
    assert client.get("/api/health").status_code == 200
    operation = next(
        view
        for view in app.app.view_functions.values()
        if isinstance(view, FlaskOperation) and view.operation_id == "kindling.handlers.health.get_health"
    )
    built = operation.fn
    assert client.get("/api/health").status_code == 200
    assert operation.fn is built
