"""The organization's reporting currency and locale: read by its members, set by its admins, chosen at sign-up."""

from __future__ import annotations

from tests.factories import PASSWORD

URL = "/api/organization"


def sign_up(client, email: str, **fields):
    body = {"email": email, "password": PASSWORD, "name": "Ada", "returnToken": True, **fields}
    return client.post("/api/auth/sign-up", json=body)


def test_members_read_and_admins_set_the_money_settings(client, make):
    admin = make.admin()
    member = make.member(admin)
    organization = make.organization(admin)
    expected = {
        "id": organization.id,
        "name": organization.name,
        "slug": organization.slug,
        "reportingCurrency": "USD",
        "locale": "en",
    }
    assert client.get(URL, headers=member.headers).json() == {"data": expected}
    response = client.patch(URL, json={"reportingCurrency": "EUR", "locale": "de-CH"}, headers=admin.headers)
    assert response.status_code == 200
    assert response.json()["data"] == expected | {"reportingCurrency": "EUR", "locale": "de_CH"}
    assert client.get(URL, headers=member.headers).json()["data"]["reportingCurrency"] == "EUR"
    assert client.patch(URL, json={"locale": "fr"}, headers=member.headers).status_code == 403
    assert client.get(URL, headers=make.consultant().headers).status_code == 403


def test_unknown_currencies_and_locales_are_400(client, make):
    admin = make.admin()
    cases = [
        ({"reportingCurrency": "ABC"}, "unknown_currency"),
        ({"reportingCurrency": "XAU"}, "unknown_currency"),
        ({"reportingCurrency": "eur"}, "validation_error"),
        ({"locale": "xx_YY"}, "unknown_locale"),
        ({"locale": "not a locale"}, "validation_error"),
        ({}, "validation_error"),
        ({"currency": "EUR"}, "validation_error"),
    ]
    for body, code in cases:
        response = client.patch(URL, json=body, headers=admin.headers)
        assert (response.status_code, response.json()["code"]) == (400, code), body
    assert client.get(URL, headers=admin.headers).json()["data"]["reportingCurrency"] == "USD"


def test_a_new_organization_may_choose_its_currency_and_locale_at_sign_up(client):
    response = sign_up(client, "ada@example.test", organizationName="Kyoto Care", reportingCurrency="JPY", locale="ja")
    assert response.status_code == 201
    headers = {"Authorization": f"Bearer {response.json()['data']['session']['token']}"}
    data = client.get(URL, headers=headers).json()["data"]
    assert (data["reportingCurrency"], data["locale"]) == ("JPY", "ja")
    plain = sign_up(client, "bob@example.test", organizationName="Plain Care").json()["data"]["session"]["token"]
    data = client.get(URL, headers={"Authorization": f"Bearer {plain}"}).json()["data"]
    assert (data["reportingCurrency"], data["locale"]) == ("USD", "en")
    refused = sign_up(client, "cy@example.test", organizationName="Odd Care", reportingCurrency="ABC")
    assert (refused.status_code, refused.json()["code"]) == (400, "unknown_currency")
    consultant = sign_up(client, "dee@example.test", accountType="consultant", reportingCurrency="EUR")
    assert consultant.status_code == 400


def test_programs_are_in_the_reporting_currency_unless_they_name_their_own(client, make):
    admin = make.admin()
    client.patch(URL, json={"reportingCurrency": "EUR"}, headers=admin.headers)
    body = {"name": "Match", "kind": "donation_match", "ratioPercent": 100, "perPersonCap": 10000}
    made = client.post("/api/giving/programs", json=body, headers=admin.headers).json()["data"]
    assert made["currency"] == "EUR"
    yen = client.post("/api/giving/programs", json=body | {"currency": "JPY"}, headers=admin.headers).json()["data"]
    assert yen["currency"] == "JPY"
    # A program's currency is set for good: its amounts, and its requests', are in it.
    changed = client.patch(f"/api/giving/programs/{yen['id']}", json={"currency": "EUR"}, headers=admin.headers)
    assert changed.status_code == 400
    bad = client.post("/api/giving/programs", json=body | {"currency": "ABC"}, headers=admin.headers)
    assert (bad.status_code, bad.json()["code"]) == (400, "unknown_currency")
    client.patch(URL, json={"reportingCurrency": "GBP"}, headers=admin.headers)
    assert client.get(f"/api/giving/programs/{made['id']}", headers=admin.headers).json()["data"]["currency"] == "EUR"
