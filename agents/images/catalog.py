"""The runtime image recipes by family."""

from __future__ import annotations

from agents.images import hermes, openclaw
from agents.images.build import Recipe

RECIPES: dict[str, Recipe] = {"openclaw": openclaw.RECIPE, "hermes": hermes.RECIPE}
