"""Token prices (USD per 1M tokens) and the cost of a run's records."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evaluation.records import EvalRecord
from evaluation.report.errors import ReportError

DEFAULT_PRICES = Path(__file__).with_name("prices.json")
TOKENS_PER_PRICE_UNIT = 1_000_000


class Price(BaseModel):
    """USD per 1M tokens, the unit providers publish, so the file can be edited from a price page."""

    model_config = ConfigDict(extra="forbid")
    prompt: float = Field(ge=0)
    completion: float = Field(ge=0)


def load_prices(path: Path | None = None) -> dict[str, Price]:
    """The shipped table, with the entries of `path` (same layout) replacing or adding models."""
    prices = _read_prices(DEFAULT_PRICES)
    if path is not None:
        prices.update(_read_prices(path))
    return prices


def _read_prices(path: Path) -> dict[str, Price]:
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ReportError(f"price table not found: {path}") from None
    except json.JSONDecodeError as error:
        raise ReportError(f"price table {path} is not JSON: {error}") from None
    models = payload.get("models") if isinstance(payload, dict) else None
    if not isinstance(models, dict):
        raise ReportError(f'price table {path} needs {{"models": {{"<model>": {{"prompt": .., "completion": ..}}}}}}')
    try:
        return {name.lower(): Price.model_validate(entry) for name, entry in models.items()}
    except ValidationError as error:
        raise ReportError(f"price table {path}: {error}") from None


def find_price(model: str, prices: dict[str, Price]) -> Price | None:
    """Exact name, then the name after a `provider/` prefix, then the longest listed prefix (dated versions)."""
    for name in (model.lower(), model.lower().rsplit("/", 1)[-1]):
        if name in prices:
            return prices[name]
        prefixes = [key for key in prices if name.startswith(key)]
        if prefixes:
            return prices[max(prefixes, key=len)]
    return None


def cost_usd(records: Iterable[EvalRecord], prices: dict[str, Price]) -> float | None:
    """Total cost of the records' tokens; None (unknown, not free) when any model has no price."""
    total = 0.0
    for record in records:
        price = find_price(record.model, prices)
        if price is None:
            return None
        total += (record.prompt_tokens * price.prompt + record.completion_tokens * price.completion) / (
            TOKENS_PER_PRICE_UNIT
        )
    return round(total, 6)
