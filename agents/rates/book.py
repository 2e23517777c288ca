"""What an event costs: the runtime's own figure, an operator override, the catalog, or nothing.

`rate_source` says which: `runtime` when the event carried `cost_usd`,
`override` for an admin ModelRate, `catalog` for the built-in table, `unpriced` (cost 0).

Model ids are matched case-insensitively, with or without a vendor prefix
("openai/gpt-4o"), and a dated snapshot matches its family: "claude-sonnet-4-20250514" is
priced as "claude-sonnet-4", "gpt-4o-mini-2024-07-18" as "gpt-4o-mini" (longest name wins).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from decimal import ROUND_HALF_UP, Decimal

from fleet.compiled_query import CompiledRows

from ..models import ModelRate, RateSource
from ..models.money import usd_to_micros
from .catalog import CATALOG


@dataclass(frozen=True)
class Price:
    since: date
    input_usd_per_mtok: Decimal
    output_usd_per_mtok: Decimal
    provider: str = ""  # overrides only: "" applies to every provider


@dataclass(frozen=True)
class Charge:
    cost_micros: int
    rate_source: str


def _name_candidates(model: str) -> list[str]:
    name = model.strip().lower()
    bare = name.rsplit("/", 1)[-1]
    return [name] if bare == name else [name, bare]


class _Table:
    """Prices by model name, each list oldest first."""

    def __init__(self, prices: Iterable[tuple[str, Price]]):
        self._by_model: dict[str, list[Price]] = defaultdict(list)
        for model, price in prices:
            self._by_model[model.strip().lower()].append(price)
        for rows in self._by_model.values():
            rows.sort(key=lambda p: p.since)
        self._names_longest_first = sorted(self._by_model, key=len, reverse=True)
        self._resolved: dict[str, str | None] = {}
        self._prices: dict[tuple, Price | None] = {}

    def family(self, model: str) -> str | None:
        """The table's name for `model`: itself, or the longest name it is a dated variant of."""
        if model not in self._resolved:
            self._resolved[model] = self._find(model)
        return self._resolved[model]

    def _find(self, model: str) -> str | None:
        for candidate in _name_candidates(model):
            if candidate in self._by_model:
                return candidate
        for candidate in _name_candidates(model):
            for name in self._names_longest_first:
                if candidate.startswith((name + "-", name + "@")):
                    return name
        return None

    def price(self, model: str, provider: str, day: date) -> Price | None:
        key = (model, provider, day)
        if key not in self._prices:  # a batch repeats a few (model, provider, day) many times
            self._prices[key] = self._price(model, provider, day)
        return self._prices[key]

    def _price(self, model: str, provider: str, day: date) -> Price | None:
        name = self.family(model)
        if name is None:
            return None
        provider = provider.strip().lower()
        applicable = [p for p in self._by_model[name] if p.since <= day and p.provider in ("", provider)]
        # Latest first; on the same day a provider-specific override beats a general one.
        return max(applicable, key=lambda p: (p.since, p.provider != ""), default=None)


CATALOG_TABLE = _Table((rate.model, Price(rate.since, rate.input_usd_per_mtok, rate.output_usd_per_mtok))
                       for rate in CATALOG)


_override_rows = CompiledRows(lambda: ModelRate.objects.values_list(
    "model", "effective_from", "input_usd_per_mtok", "output_usd_per_mtok", "provider"))


class RateBook:
    """Prices for one ingestion batch: the overrides are read once, the catalog is built in."""

    def __init__(self, overrides: Iterable[tuple[str, Price]] = ()):
        self._overrides = _Table(overrides)

    @classmethod
    def load(cls) -> RateBook:
        """The overrides as they are now. Read for every batch (settling a gateway call is one):
        rows of one statement compiled once, not model instances."""
        return cls((model, Price(since, input_rate, output_rate, provider.strip().lower()))
                   for model, since, input_rate, output_rate, provider in _override_rows.rows())

    def charge(self, *, model: str, provider: str, day: date, input_tokens: int, output_tokens: int,
               cost_usd=None) -> Charge:
        if cost_usd is not None:
            return Charge(usd_to_micros(cost_usd), RateSource.RUNTIME)
        price, source = self.price(model=model, provider=provider, day=day)
        if price is None:
            return Charge(0, RateSource.UNPRICED)
        cost = input_tokens * price.input_usd_per_mtok + output_tokens * price.output_usd_per_mtok
        # USD per million tokens x tokens = micro-dollars.
        return Charge(int(cost.to_integral_value(ROUND_HALF_UP)), source)

    def price(self, *, model: str, provider: str, day: date) -> tuple[Price | None, str]:
        """The price of `model` on `day` and where it comes from (an override beats the catalog)."""
        for table, source in ((self._overrides, RateSource.OVERRIDE), (CATALOG_TABLE, RateSource.CATALOG)):
            price = table.price(model, provider, day)
            if price is not None:
                return price, source
        return None, RateSource.UNPRICED
