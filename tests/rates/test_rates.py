"""The ECB's reference rates: imported as published, the quote of the last publication on or
before a date, and the one exact conversion rule."""

from __future__ import annotations

import datetime as dt
import hashlib
import zipfile
from fractions import Fraction

import pytest
from sqlalchemy import create_engine, func, select

from kindling import cli
from kindling.errors import BadRequest
from kindling.platform import money
from kindling.platform.database import upgrade
from kindling.rates import service as rates
from kindling.rates.models import ExchangeRate
from tests.helpers import rates as history

URL = "/api/rates"


def rate(client, account, **query):
    return client.get(URL, params=query, headers=account.headers)


def test_a_weekend_date_answers_fridays_quote_and_says_so(client, make, db):
    history.load(db)
    member = make.member(make.admin())
    response = rate(client, member, date="2026-11-01", currency="JPY")
    assert response.status_code == 200
    assert response.json() == {
        "data": {
            "currency": "JPY",
            "date": "2026-11-01",
            "rateDate": "2026-10-30",
            "rate": "175.68",
            "source": "ECB",
            "ratesDigest": history.DIGEST,
        }
    }
    assert rate(client, member, date="2026-10-27", currency="ISK").json()["data"]["rate"] == "136.4"
    # However old the last publication is, it is the one used, and stated.
    assert rate(client, member, date="2030-01-01", currency="USD").json()["data"]["rateDate"] == "2026-10-30"
    euro = rate(client, make.consultant(), date="2026-10-28", currency="EUR").json()["data"]
    assert (euro["rate"], euro["rateDate"]) == ("1", "2026-10-28")


def test_a_currency_the_ecb_does_not_quote_then_is_404_and_a_bad_code_400(client, make, db):
    history.load(db)
    member = make.member(make.admin())
    for currency, date in (("TWD", "2026-10-30"), ("RUB", "2026-10-30"), ("USD", "2026-10-25")):
        response = rate(client, member, date=date, currency=currency)
        assert (response.status_code, response.json()["code"]) == (404, "rate_unavailable"), currency
        assert currency in response.json()["error"]
    for query in ({"date": "2026-10-30", "currency": "ABC"}, {"date": "2026-10-30", "currency": "XAU"}):
        response = rate(client, member, **query)
        assert (response.status_code, response.json()["code"]) == (400, "unknown_currency")
    for query in ({"date": "2026-02-30", "currency": "USD"}, {"date": "30/10/2026", "currency": "USD"}, {}):
        assert rate(client, member, **query).status_code == 400


def test_an_import_replaces_the_table_and_refuses_a_malformed_file(db):
    history.load(db)
    smaller = b"Date,USD,\n2026-10-30,1.2,\n"
    imported = history.load(db, smaller)
    assert (imported.quotes, imported.digest) == (1, hashlib.sha256(smaller).hexdigest())
    assert db.scalar(select(func.count()).select_from(ExchangeRate)) == 1
    assert rates.digest(db) == imported.digest
    for bad in (b"", b"Day,USD\n2026-10-30,1.2\n", b"Date,USD\n2026-10-30,-1\n", b"Date,USD\nyesterday,1.2\n"):
        with pytest.raises(BadRequest) as refused:
            history.load(db, bad)
        assert refused.value.code == "invalid_rates_file"


def test_pair_quotes_share_the_last_day_both_are_published(db):
    history.load(db, b"Date,USD,JPY,\n2026-10-30,1.1172,N/A,\n2026-10-29,1.113,175.92,\n")
    usd, jpy = rates.pair(db, source="USD", target="JPY", on=dt.date(2026, 10, 31))
    assert (usd.rate_date, usd.rate, jpy.rate) == (dt.date(2026, 10, 29), "1.113", "175.92")
    euro, dollar = rates.pair(db, source="EUR", target="USD", on=dt.date(2026, 10, 31))
    assert (euro.rate, dollar.rate, dollar.rate_date) == ("1", "1.1172", dt.date(2026, 10, 30))
    assert rates.pair(db, source="TWD", target="USD", on=dt.date(2026, 10, 31)) is None


def test_the_conversion_rule_is_an_exact_fraction_of_the_decimal_quotes():
    # 100.00 USD to JPY at 1.1172 USD and 175.68 JPY per EUR: 10000 × 10^-2 × 175.68 / 1.1172 yen.
    exact = money.converted(10000, source="USD", target="JPY", source_rate="1.1172", target_rate="175.68")
    assert exact == Fraction(17568 * 10000, 11172) and (money.floor(exact), money.half_even(exact)) == (15725, 15725)
    # 136 krónur (exponent 0) to KWD fils (exponent 3) at 136 and 0.3421 per EUR: 342.1 fils.
    exact = money.converted(136, source="ISK", target="KWD", source_rate="136", target_rate="0.3421")
    assert exact == Fraction(3421, 10) and (money.floor(exact), money.half_even(exact)) == (342, 342)
    # 3.47 EUR to JPY at 175.68: 609.6096 yen, floored to 609, rounded to 610.
    exact = money.converted(347, source="EUR", target="JPY", source_rate="1", target_rate="175.68")
    assert (money.floor(exact), money.half_even(exact)) == (609, 610)
    assert money.half_even(Fraction(5, 2)) == 2 and money.half_even(Fraction(7, 2)) == 4
    assert money.floor(Fraction(-1, 2)) == -1


def test_the_command_imports_the_bundled_history_or_an_ecb_file(fresh_database_url, monkeypatch, tmp_path, capsys):
    upgrade(fresh_database_url)
    monkeypatch.setenv("DATABASE_URL", fresh_database_url)
    assert cli.main(["rates", "import"]) == 0
    bundled, _ = rates.bundled_history()
    assert hashlib.sha256(bundled).hexdigest() in capsys.readouterr().out
    engine = create_engine(fresh_database_url)
    with engine.connect() as connection:
        friday = connection.execute(
            select(ExchangeRate.rate).where(ExchangeRate.currency == "USD", ExchangeRate.rate_date == "2026-10-30")
        ).scalar_one()
        first = connection.execute(select(func.min(ExchangeRate.rate_date))).scalar_one()
    assert (friday, str(first)) == ("1.1172", "1999-01-04")
    archive = tmp_path / "eurofxref-hist.zip"
    with zipfile.ZipFile(archive, "w") as file:
        file.writestr("eurofxref-hist.csv", history.HISTORY)
    assert cli.main(["rates", "import", "--file", str(archive)]) == 0
    assert history.DIGEST in capsys.readouterr().out
    with engine.connect() as connection:
        assert connection.execute(select(func.count()).select_from(ExchangeRate)).scalar_one() == 30
    engine.dispose()
    (tmp_path / "bad.csv").write_bytes(b"not,the,ecb\n")
    assert cli.main(["rates", "import", "--file", str(tmp_path / "bad.csv")]) == 1
    assert cli.main(["rates", "import", "--file", str(tmp_path / "missing.csv")]) == 1
