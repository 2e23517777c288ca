"""Money is stored as integer micro-dollars and shown as USD numbers."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

MICROS_PER_USD = 1_000_000


def usd_to_micros(usd) -> int:
    return int((Decimal(str(usd)) * MICROS_PER_USD).to_integral_value(ROUND_HALF_UP))


def micros_to_usd(micros: int | None) -> float:
    return round((micros or 0) / MICROS_PER_USD, 6)
