"""Paths the router would mishandle get the envelope with the right status and Allow header."""

from __future__ import annotations


def test_an_encoded_newline_in_a_path_parameter_is_not_found(client, make):
    consultant = make.consultant()
    for path in ("/api/webhooks/endpoints/abc%0A", "/api/webhooks/endpoints/%0Aabc/deliveries"):
        response = client.get(path, headers=consultant.headers)
        assert response.status_code == 404 and response.json()["code"] == "not_found", path


def test_a_wrong_method_lists_every_method_of_the_path(client):
    response = client.put("/api/webhooks/endpoints")
    assert response.status_code == 405 and response.json()["code"] == "method_not_allowed"
    assert response.headers["allow"] == "GET, HEAD, POST"
    response = client.post("/api/webhooks/endpoints/some-id")
    assert response.headers["allow"] == "DELETE, GET, HEAD, PATCH"
    assert client.request("OPTIONS", "/api/health").headers["allow"] == "GET, HEAD"


def test_a_literal_path_is_not_mistaken_for_a_template(client):
    # /api/kindness/stats also matches /api/kindness/{id}, whose methods it must not advertise.
    response = client.request("OPTIONS", "/api/kindness/stats")
    assert response.status_code == 405 and response.headers["allow"] == "GET, HEAD"


def test_a_method_a_literal_path_lacks_is_not_given_to_a_template_that_matches_it(client, make):
    # GET /api/compliance/export would match GET /api/compliance/{framework}, with "export" as
    # the framework: it is the export's path, and the export is a POST.
    response = client.get("/api/compliance/export", headers=make.admin().headers)
    assert response.status_code == 405 and response.json()["code"] == "method_not_allowed"
    assert response.headers["allow"] == "POST"
