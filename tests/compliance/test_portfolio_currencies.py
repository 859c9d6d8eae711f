"""The portfolio in one currency (`currency=`): each client's gifts converted at the ECB quotes of
their days, the originals kept per currency in the JSON, the CSV's five columns unchanged; and
the PDF's money written in the organization's locale."""

from __future__ import annotations

from decimal import Decimal

import pytest

from kindling.platform import money
from tests.helpers import rates as history
from tests.helpers.compliance import PORTFOLIO_HEADER, csv_rows, export, pdf_text, portfolio


@pytest.fixture
def clients_in_two_currencies(make, db):
    """A consultant's euro client and dollar client; the dollar client's people gave in three currencies."""
    history.load(db)
    consultant = make.consultant()
    euros, dollars = make.admin("A euros"), make.admin("B dollars")
    make.organization(euros).reporting_currency = "EUR"
    db.flush()
    for admin in (euros, dollars):
        make.client(consultant, admin)
    make.activity.donation(make.member(euros), amount=2503, currency="EUR")
    make.activity.donation(make.member(dollars), amount=1000, currency="USD")
    make.activity.donation(make.member(dollars), amount=1000, currency="JPY")
    make.activity.donation(make.member(dollars), amount=150000, currency="TWD")
    return consultant


def test_each_client_in_its_own_currency_unless_one_is_asked_for(client, clients_in_two_currencies):
    own = {r["client"]: r for r in portfolio(client, clients_in_two_currencies, format="json").json()["data"]}
    # 1000 yen at 175.68 and 1.1172 per EUR: 635.93 cents, 636.
    assert (own["A euros"]["donations"], own["A euros"]["currency"]) == (25.03, "EUR")
    assert (own["B dollars"]["donations"], own["B dollars"]["currency"]) == (16.36, "USD")
    asked = {
        r["client"]: r
        for r in portfolio(client, clients_in_two_currencies, format="json", currency="EUR").json()["data"]
    }
    # 10.00 USD is 895 euro cents, 1000 yen 569: 14.64 EUR; TWD has no quote.
    assert [(r["donations"], r["currency"]) for r in asked.values()] == [(25.03, "EUR"), (14.64, "EUR")]
    assert asked["B dollars"]["original"] == [
        {"currency": "JPY", "amount": 1000},
        {"currency": "TWD", "amount": 150000},
        {"currency": "USD", "amount": 1000},
    ]
    assert asked["B dollars"]["unconverted"] == {"donations": {"TWD": 150000}, "matchedGiving": {}}
    assert asked["A euros"]["unconverted"] == {"donations": {}, "matchedGiving": {}}
    rows = csv_rows(portfolio(client, clients_in_two_currencies, format="csv", currency="EUR"))
    assert rows[0] == PORTFOLIO_HEADER and [row[3] for row in rows[1:]] == ["25.03", "14.64"]
    yen = portfolio(client, clients_in_two_currencies, format="json", currency="JPY").json()["data"]
    # 25.03 EUR is 4397.2704 yen, 4397; 10.00 USD 1572.5027 yen, 1573, plus the 1000 yen.
    assert [r["donations"] for r in yen] == [4397.0, 2573.0]


def test_an_unknown_currency_is_400(client, clients_in_two_currencies):
    for code in ("ABC", "XAU", "eur"):
        response = portfolio(client, clients_in_two_currencies, format="json", currency=code)
        assert response.status_code == 400, code
    assert portfolio(client, clients_in_two_currencies, format="csv", currency="ABC").json()["code"] == (
        "unknown_currency"
    )


@pytest.mark.parametrize(
    ("amount", "currency", "locale", "written"),
    [
        ("1234.5", "EUR", "de_DE", "1.234,50\u00a0€"),
        ("1234.5", "USD", "en", "$1,234.50"),
        ("1234", "JPY", "ja", "￥1,234"),
        ("1234.5", "HUF", "hu", "1\u00a0234,50\u00a0Ft"),  # ISO 4217's two decimals, not CLDR's none
        ("1.234", "KWD", "en", "KWD1.234"),
        ("12.3456", "CLF", "es_CL", "CLF12,3456"),
    ],
)
def test_money_is_written_as_the_locale_writes_it_with_the_iso_decimals(amount, currency, locale, written):
    assert money.formatted(Decimal(amount), currency, locale) == written


def test_the_pdf_writes_money_in_the_organizations_locale(client, make, db):
    admin = make.admin()
    organization = make.organization(admin)
    organization.reporting_currency, organization.locale = "EUR", "de_DE"
    db.flush()
    make.activity.donation(make.member(admin), amount=123450, currency="EUR")
    text = " ".join(pdf_text(export(client, admin, framework="gri", format="pdf").content).split())
    assert "1.234,50 €" in text
