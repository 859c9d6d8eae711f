"""Amounts in minor units of an ISO 4217 currency: their exponent, their value in major units, the
payment provider's wire amounts, and the one conversion rule between two currencies."""

from __future__ import annotations

import copy
import functools
from decimal import Decimal
from fractions import Fraction

import iso4217

from kindling.errors import invalid

# Stripe's wire exponent where it is not the ISO 4217 one (its "zero-decimal" list; ISK, which it
# keeps two-decimal in whole krónur). HUF and TWD are two-decimal both in ISO and on the wire, and
# their payouts only whole units; the three-decimal currencies must end in 0 on the wire.
STRIPE_EXPONENTS = {
    **dict.fromkeys(
        (
            "BIF",
            "CLP",
            "DJF",
            "GNF",
            "JPY",
            "KMF",
            "KRW",
            "MGA",
            "PYG",
            "RWF",
            "UGX",
            "VND",
            "VUV",
            "XAF",
            "XOF",
            "XPF",
        ),
        0,
    ),
    "ISK": 2,
}
# Wire amounts Stripe accepts only as multiples of this (its "special cases").
STRIPE_STEPS = {"ISK": 100, **dict.fromkeys(("BHD", "JOD", "KWD", "OMR", "TND"), 10)}


@functools.cache
def _exponents() -> dict[str, int]:
    # Codes without a minor unit (gold, special drawing rights, the testing code) hold no money.
    return {c.code: c.exponent for c in iso4217.Currency if c.exponent is not None}


def currencies() -> list[str]:
    """Every ISO 4217 code that has a minor unit, in order."""
    return sorted(_exponents())


def is_currency(code: str) -> bool:
    """Whether `code` is an ISO 4217 currency with a minor unit."""
    return code in _exponents()


def checked(code: str, *, location: str = "body", field: str = "currency") -> str:
    """`code` when it is a currency of the ISO 4217 table; else the 400 `unknown_currency` naming the field."""
    if not is_currency(code):
        raise invalid(location, field, "is not an ISO 4217 currency with a minor unit", code="unknown_currency")
    return code


def exponent(currency: str) -> int:
    """How many decimals the currency's ISO 4217 minor unit has (2 for USD, 0 for JPY, 3 for KWD)."""
    return _exponents()[currency]


def major_units(minor: int, currency: str) -> Decimal:
    """The exact amount in major units: 1234 USD cents is 12.34, 1234 JPY is 1234."""
    return Decimal(minor).scaleb(-exponent(currency))


def formatted(amount: Decimal, currency: str, locale: str) -> str:
    """`amount` (major units) as the locale writes money, with the ISO 4217 exponent's decimals
    (CLDR's digits differ: it gives HUF none)."""
    from babel import numbers  # a PDF's import, not the offline verifier's

    pattern = copy.copy(numbers.parse_pattern(numbers.Locale.parse(locale).currency_formats["standard"]))
    pattern.frac_prec = (exponent(currency), exponent(currency))
    return pattern.apply(amount, locale, currency=currency, currency_digits=False)


def stripe_exponent(currency: str) -> int:
    """The exponent of Stripe's amounts in the currency."""
    return STRIPE_EXPONENTS.get(currency, exponent(currency))


def stripe_step(currency: str) -> int:
    """The ISO minor units Stripe charges the currency in multiples of (100 for MGA, 10 for KWD, else 1)."""
    step = STRIPE_STEPS.get(currency, 1) * Fraction(10) ** (exponent(currency) - stripe_exponent(currency))
    return max(1, step.numerator // step.denominator)


def to_stripe(minor: int, currency: str) -> int | None:
    """Stripe's wire amount for `minor` ISO minor units, or None when Stripe cannot charge it."""
    wire = Fraction(minor) * Fraction(10) ** (stripe_exponent(currency) - exponent(currency))
    if wire.denominator != 1 or wire.numerator % STRIPE_STEPS.get(currency, 1):
        return None
    return wire.numerator


def from_stripe(wire: int, currency: str) -> int | None:
    """ISO minor units of Stripe's wire amount, or None when it is not a whole number of them."""
    minor = Fraction(wire) * Fraction(10) ** (exponent(currency) - stripe_exponent(currency))
    return minor.numerator if minor.denominator == 1 else None


def converted(minor: int, *, source: str, target: str, source_rate: str, target_rate: str) -> Fraction:
    """`minor` units of `source` in minor units of `target`, exactly: amount × 10^(e_to − e_from)
    × q_to / q_from, where q is each currency's ECB quote (units per 1 EUR, as the decimal string
    the ECB publishes; EUR's is 1). Matches floor it, reports round it half-even."""
    scale = Fraction(10) ** (exponent(target) - exponent(source))
    return Fraction(minor) * scale * Fraction(target_rate) / Fraction(source_rate)


def floor(value: Fraction) -> int:
    """The largest whole number of minor units not above `value`."""
    return value.numerator // value.denominator


def half_even(value: Fraction) -> int:
    """`value` rounded to whole minor units, a half to the even neighbour."""
    return round(value)
