"""Pricing: runtime cost first, then operator overrides, then the effective-dated catalog."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest

from agents.models import ModelRate
from agents.rates.book import RateBook
from agents.rates.catalog import CATALOG

DAY = date(2026, 1, 15)


def charge(book=None, *, model, provider="openai", day=DAY, input_tokens=1_000_000, output_tokens=0, cost_usd=None):
    return (book or RateBook()).charge(model=model, provider=provider, day=day, input_tokens=input_tokens,
                                       output_tokens=output_tokens, cost_usd=cost_usd)


@pytest.mark.parametrize(
    ("model", "input_usd"),
    [
        ("gpt-4o", 2.50),
        ("GPT-4o", 2.50),
        ("openai/gpt-4o", 2.50),
        ("gpt-4o-2024-08-06", 2.50),
        ("gpt-4o-mini", 0.15),
        ("gpt-4o-mini-2024-07-18", 0.15),
        ("gpt-4.1-nano-2025-04-14", 0.10),
        ("o4-mini", 1.10),
        ("claude-sonnet-4-20250514", 3.00),
        ("anthropic/claude-opus-4-1-20250805", 15.00),
        ("claude-sonnet-4-5-20250929", 3.00),
        ("claude-haiku-4-5", 1.00),
        ("gemini-2.5-flash", 0.30),
        ("gemini-2.5-flash-lite", 0.10),
        ("gemini-2.5-pro", 1.25),
        ("nvidia/nemotron-3-super-120b-a12b", 0.20),
        ("nvidia/llama-3.1-nemotron-ultra-253b-v1", 0.60),
        ("nvidia/llama-3.3-nemotron-super-49b-v1.5", 0.10),
        ("nvidia/nemotron-3-nano-30b-a3b", 0.06),
    ],
)
def test_catalog_prices_a_model_and_its_dated_snapshots(model, input_usd):
    result = charge(model=model)

    assert (result.cost_micros, result.rate_source) == (round(input_usd * 1_000_000), "catalog")


def test_the_catalog_covers_the_four_nemotron_models_of_the_spec():
    models = {rate.model for rate in CATALOG}

    assert {
        "nvidia/nemotron-3-super-120b-a12b",
        "nvidia/llama-3.1-nemotron-ultra-253b-v1",
        "nvidia/llama-3.3-nemotron-super-49b-v1.5",
        "nvidia/nemotron-3-nano-30b-a3b",
    } <= models


def test_the_catalog_price_in_force_on_the_events_day_applies():
    before_cut, after_cut = date(2025, 6, 9), date(2025, 6, 10)

    assert charge(model="o3", day=before_cut).cost_micros == 10_000_000
    assert charge(model="o3", day=after_cut).cost_micros == 2_000_000


def test_a_model_before_its_first_price_is_unpriced():
    result = charge(model="gpt-5", day=date(2025, 1, 1))

    assert (result.cost_micros, result.rate_source) == (0, "unpriced")


def test_input_and_output_tokens_are_priced_separately_and_rounded_to_micro_dollars():
    result = charge(model="gpt-4o-mini", input_tokens=3, output_tokens=7)  # 0.45 + 4.2 micro-dollars

    assert result.cost_micros == 5


def test_a_runtime_cost_beats_every_rate():
    result = charge(model="gpt-4o", cost_usd=Decimal("0.5"))

    assert (result.cost_micros, result.rate_source) == (500_000, "runtime")


@pytest.mark.django_db
def test_an_operator_override_beats_the_catalog_from_its_day_on():
    ModelRate.objects.create(model="gpt-4o", input_usd_per_mtok=Decimal("1.00"), output_usd_per_mtok=Decimal("2"),
                             effective_from=DAY)
    book = RateBook.load()

    assert charge(book, model="gpt-4o-2024-11-20").cost_micros == 1_000_000
    assert charge(book, model="gpt-4o-2024-11-20").rate_source == "override"
    assert charge(book, model="gpt-4o", day=date(2026, 1, 14)).rate_source == "catalog"


@pytest.mark.django_db
def test_an_override_for_one_provider_leaves_other_providers_alone():
    ModelRate.objects.create(model="my-model", provider="Azure", input_usd_per_mtok=Decimal("4"),
                             output_usd_per_mtok=Decimal("4"), effective_from=date(2026, 1, 1))
    book = RateBook.load()

    assert charge(book, model="my-model", provider="azure").cost_micros == 4_000_000
    assert charge(book, model="my-model", provider="openai").rate_source == "unpriced"


@pytest.mark.django_db
def test_a_provider_override_beats_a_general_one_of_the_same_day():
    for provider, price in (("", "1"), ("azure", "3")):
        ModelRate.objects.create(model="gpt-4o", provider=provider, input_usd_per_mtok=Decimal(price),
                                 output_usd_per_mtok=Decimal(price), effective_from=date(2026, 1, 1))
    book = RateBook.load()

    assert charge(book, model="gpt-4o", provider="azure").cost_micros == 3_000_000
    assert charge(book, model="gpt-4o", provider="openai").cost_micros == 1_000_000
