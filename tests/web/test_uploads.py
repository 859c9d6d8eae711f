"""Multipart bodies as Connexion validates them: malformed ones are 400, parsed files are closed."""

from __future__ import annotations

import gc
import warnings

from tests.helpers import assert_envelope

CSV = b"organizationId,message\nx,\n"


def test_a_malformed_multipart_body_is_400(client, make):
    consultant = make.consultant()
    response = client.post(
        "/api/bulk/invite",
        content=b"--b\r\nnot a part header--b--",
        headers={**consultant.headers, "Content-Type": "multipart/form-data; boundary=b"},
    )
    assert_envelope(response, 400, "validation_error")


def test_validation_closes_every_file_it_parsed(client, make):
    consultant = make.consultant()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        response = client.post(
            "/api/bulk/invite", files={"file": ("clients.csv", CSV, "text/csv")}, headers=consultant.headers
        )
        gc.collect()
    assert response.status_code == 200, response.text
    assert [str(warning.message) for warning in caught if issubclass(warning.category, ResourceWarning)] == []
