"""Amounts in minor units of an ISO 4217 currency, and their value in major units."""

from __future__ import annotations

from decimal import Decimal

# ISO 4217 currencies whose minor unit is not a hundredth; every other code has two decimals.
EXPONENTS = {
    **dict.fromkeys(
        (
            "BIF",
            "CLP",
            "DJF",
            "GNF",
            "ISK",
            "JPY",
            "KMF",
            "KRW",
            "PYG",
            "RWF",
            "UGX",
            "UYI",
            "VND",
            "VUV",
            "XAF",
            "XOF",
            "XPF",
        ),
        0,
    ),
    **dict.fromkeys(("BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND"), 3),
    **dict.fromkeys(("CLF", "UYW"), 4),
}
DEFAULT_EXPONENT = 2


def exponent(currency: str) -> int:
    """How many decimals the currency's minor unit has (2 for USD, 0 for JPY, 3 for KWD)."""
    return EXPONENTS.get(currency, DEFAULT_EXPONENT)


def major_units(minor: int, currency: str) -> Decimal:
    """The exact amount in major units: 1234 USD cents is 12.34, 1234 JPY is 1234."""
    return Decimal(minor).scaleb(-exponent(currency))
