"""Multipart bodies as Connexion validates them: malformed ones are 400, parsed files are closed."""

from __future__ import annotations

import gc
import warnings

import pytest
from connexion.validators import MultiPartFormDataValidator

from kindling.web.overrides.multipart_parser import check_connexion
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
        response = client.post("/api/bulk/invite", files={"file": ("clients.csv", CSV, "text/csv")}, headers=consultant.headers)
        gc.collect()
    assert response.status_code == 200, response.text
    assert [str(warning.message) for warning in caught if issubclass(warning.category, ResourceWarning)] == []


def test_the_start_up_check_accepts_this_connexion_and_refuses_a_changed_one():
    check_connexion()

    class WithoutTheHook(MultiPartFormDataValidator):
        _form_parser_cls = None

    class ParsingElsewise(MultiPartFormDataValidator):
        async def _parse(self, stream, scope):
            return {}

    for changed in (WithoutTheHook, ParsingElsewise):
        with pytest.raises(RuntimeError, match="_form_parser_cls"):
            check_connexion(changed)
