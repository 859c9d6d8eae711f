"""Compliance figures in the reporting currency: each gift converted at the ECB quotes of its day
and rounded half-even, the quotes listed, unquoted currencies apart, all recomputed by
`kindling evidence verify --report` from the log and the listed quotes alone."""

from __future__ import annotations

import pytest

from tests.helpers import rates as history
from tests.helpers.compliance import exported
from tests.helpers.evidence import check_report, export, resigned


@pytest.fixture
def multinational(make, db):
    """A USD organization whose people gave in dollars, euros, yen and Taiwan dollars."""
    history.load(db)
    admin = make.admin()
    people = [make.member(admin) for _ in range(3)]
    make.activity.donation(people[0], amount=1000, currency="USD")
    # 25.03 EUR at 1.1172 USD per EUR: 2796.3516 cents, 2796.
    make.activity.donation(people[1], amount=2503, currency="EUR")
    # 1000 JPY at 175.68 and 1.1172: 635.93 cents, 636 (a match would floor it to 635).
    make.activity.donation(people[2], amount=1000, currency="JPY")
    # The ECB quotes no TWD: reported apart, never as zero.
    make.activity.donation(people[0], amount=150000, currency="TWD")
    make.activity.donation(people[1], amount=99900, currency="TWD", status="refunded")
    return admin


def amounts(report: dict) -> dict:
    return next(i for i in report["data"]["indicators"] if i["metric"] == "donation_amount")


def test_each_gift_is_converted_at_its_days_quotes_half_even_and_the_quotes_are_listed(client, multinational):
    report = exported(client, multinational, "gri")
    indicator = amounts(report)
    assert (indicator["value"], indicator["unit"]) == (44.32, "USD")
    assert indicator["unconverted"] == {"TWD": 150000}
    assert indicator["evidence"] == {"verified": 4, "total": 5}
    assert report["data"]["rates"] == [
        {"currency": "JPY", "rateDate": "2026-10-30", "rate": "175.68"},
        {"currency": "USD", "rateDate": "2026-10-30", "rate": "1.1172"},
    ]
    assert report["data"]["ratesDigest"] == history.DIGEST
    view = client.get("/api/compliance/gri", headers=multinational.headers).json()["data"]
    [shown] = [i for i in view["indicators"] if i["code"] == indicator["code"]]
    assert (shown["value"], shown["unconverted"]) == (44.32, {"TWD": 150000})
    assert view["rates"] == report["data"]["rates"]


def test_a_new_reporting_currency_converts_the_same_gifts_into_it(client, multinational):
    client.patch("/api/organization", json={"reportingCurrency": "EUR"}, headers=multinational.headers)
    indicator = amounts(exported(client, multinational, "gri"))
    # 10.00 USD is 8.95095 EUR (895), 1000 yen 5.692167 EUR (569), and 25.03 EUR itself.
    assert (indicator["value"], indicator["unit"], indicator["unconverted"]) == (39.67, "EUR", {"TWD": 150000})


def test_the_verifier_recomputes_the_converted_figures_from_the_listed_quotes(
    client, runtime, multinational, tmp_path, capsys
):
    bundle = export(client, multinational)
    report = exported(client, multinational, "gri")
    code, output = check_report(tmp_path, capsys, client, bundle, report)
    assert code == 0, output
    for change in (
        lambda data: data["rates"][1].update(rate="1.2"),
        lambda data: data["rates"].pop(0),
        lambda data: amounts({"data": data}).update(unconverted={}),
        lambda data: amounts({"data": data}).pop("unconverted"),
    ):
        tampered = exported(client, multinational, "gri")
        change(tampered["data"])
        code, output = check_report(tmp_path, capsys, client, bundle, resigned(runtime, tampered))
        assert code == 1 and "from the log" in output, output


def test_a_report_issued_before_conversions_still_verifies(client, make, runtime, tmp_path, capsys):
    admin = make.admin()
    make.activity.donation(make.member(admin), amount=2500)
    report = exported(client, admin, "gri")
    data = report["data"]
    # As the export stood before: no quotes, no digest, no `unconverted`.
    del data["rates"], data["ratesDigest"]
    for indicator in data["indicators"]:
        indicator.pop("unconverted", None)
    code, output = check_report(tmp_path, capsys, client, export(client, admin), resigned(runtime, report))
    assert code == 0, output
