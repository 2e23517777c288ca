"""The built-in price table: USD per million input and output tokens, effective-dated.

List prices of the providers' own APIs (standard tier, no batch or cache discounts; Gemini 2.5
Pro at its <=200k-token prompt tier). NVIDIA does not list per-token prices for its hosted
Nemotron models, so those four rows carry the prices hosted inference providers charge; an
operator who pays differently sets a ModelRate override in the admin, which always wins.

A model's price on a given UTC day is the row with the latest `since` not after that day.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import Decimal


@dataclass(frozen=True)
class CatalogRate:
    model: str
    provider: str
    since: date
    input_usd_per_mtok: Decimal
    output_usd_per_mtok: Decimal


def _rate(model: str, provider: str, since: str, input_price: str, output_price: str) -> CatalogRate:
    return CatalogRate(model, provider, date.fromisoformat(since), Decimal(input_price), Decimal(output_price))


CATALOG: tuple[CatalogRate, ...] = (
    # OpenAI
    _rate("gpt-4o", "openai", "2024-05-13", "5.00", "15.00"),
    _rate("gpt-4o", "openai", "2024-10-02", "2.50", "10.00"),  # the alias moved to the 2024-08-06 snapshot
    _rate("gpt-4o-mini", "openai", "2024-07-18", "0.15", "0.60"),
    _rate("gpt-4.1", "openai", "2025-04-14", "2.00", "8.00"),
    _rate("gpt-4.1-mini", "openai", "2025-04-14", "0.40", "1.60"),
    _rate("gpt-4.1-nano", "openai", "2025-04-14", "0.10", "0.40"),
    _rate("o1", "openai", "2024-12-17", "15.00", "60.00"),
    _rate("o3-mini", "openai", "2025-01-31", "1.10", "4.40"),
    _rate("o3", "openai", "2025-04-16", "10.00", "40.00"),
    _rate("o3", "openai", "2025-06-10", "2.00", "8.00"),  # the o3 price cut
    _rate("o4-mini", "openai", "2025-04-16", "1.10", "4.40"),
    _rate("gpt-5", "openai", "2025-08-07", "1.25", "10.00"),
    _rate("gpt-5-mini", "openai", "2025-08-07", "0.25", "2.00"),
    _rate("gpt-5-nano", "openai", "2025-08-07", "0.05", "0.40"),
    # Anthropic
    _rate("claude-3-5-haiku", "anthropic", "2024-10-22", "0.80", "4.00"),
    _rate("claude-3-5-sonnet", "anthropic", "2024-06-20", "3.00", "15.00"),
    _rate("claude-3-7-sonnet", "anthropic", "2025-02-24", "3.00", "15.00"),
    _rate("claude-sonnet-4", "anthropic", "2025-05-22", "3.00", "15.00"),
    _rate("claude-opus-4", "anthropic", "2025-05-22", "15.00", "75.00"),
    _rate("claude-opus-4-1", "anthropic", "2025-08-05", "15.00", "75.00"),
    _rate("claude-sonnet-4-5", "anthropic", "2025-09-29", "3.00", "15.00"),
    _rate("claude-haiku-4-5", "anthropic", "2025-10-15", "1.00", "5.00"),
    _rate("claude-opus-4-5", "anthropic", "2025-11-24", "5.00", "25.00"),
    # Google
    _rate("gemini-2.0-flash", "google", "2025-02-05", "0.10", "0.40"),
    _rate("gemini-2.0-flash-lite", "google", "2025-02-25", "0.075", "0.30"),
    _rate("gemini-2.5-pro", "google", "2025-06-17", "1.25", "10.00"),
    _rate("gemini-2.5-flash", "google", "2025-06-17", "0.30", "2.50"),
    _rate("gemini-2.5-flash-lite", "google", "2025-07-22", "0.10", "0.40"),
    # Mistral AI (La Plateforme list prices)
    _rate("mistral-large-latest", "mistral", "2024-11-18", "2.00", "6.00"),
    _rate("mistral-medium-latest", "mistral", "2025-05-07", "0.40", "2.00"),
    _rate("mistral-small-latest", "mistral", "2025-03-17", "0.10", "0.30"),
    _rate("codestral-latest", "mistral", "2025-01-13", "0.30", "0.90"),
    # Groq (on-demand list prices)
    _rate("llama-3.3-70b-versatile", "groq", "2024-12-06", "0.59", "0.79"),
    _rate("llama-3.1-8b-instant", "groq", "2024-07-23", "0.05", "0.08"),
    # NVIDIA Nemotron (the nemoclaw profile's models; hosted-provider prices, see above)
    _rate("nvidia/nemotron-3-super-120b-a12b", "nvidia", "2025-12-15", "0.20", "0.80"),
    _rate("nvidia/llama-3.1-nemotron-ultra-253b-v1", "nvidia", "2025-04-07", "0.60", "1.80"),
    _rate("nvidia/llama-3.3-nemotron-super-49b-v1.5", "nvidia", "2025-07-25", "0.10", "0.40"),
    _rate("nvidia/nemotron-3-nano-30b-a3b", "nvidia", "2025-12-15", "0.06", "0.24"),
)
