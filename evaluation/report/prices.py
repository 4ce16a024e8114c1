"""Token prices (USD per 1M tokens) and the cost of a run's records."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evaluation.records import EvalRecord
from evaluation.report.errors import ReportError
from fixtures.input_files import InputFileError, Problem, decoded, kind_of, os_problem, parse_json, validation_problems

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


class PriceTable(BaseModel):
    """The file's layout; other top-level keys (a `_note`) are the editor's."""

    model_config = ConfigDict(extra="allow")
    models: dict[str, Price]


#: The layout, as an error says it.
PRICE_LAYOUT = '{"models": {"<model>": {"prompt": <USD per 1M tokens>, "completion": <USD per 1M tokens>}}}'


class PriceTableError(InputFileError, ReportError):
    """A price table that cannot be read, named with the JSON path of each bad entry."""


def _read_prices(path: Path) -> dict[str, Price]:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise PriceTableError(path, f"price table not found; expected a JSON file {PRICE_LAYOUT}") from None
    except OSError as error:
        raise PriceTableError(path, f"price table {os_problem(error)}") from None
    summary = f"is not a price table {PRICE_LAYOUT}:"
    text, problem = decoded(data)
    if problem is None:
        payload, problem = parse_json(text or "", None, "a JSON object")
    if problem is not None:
        raise PriceTableError(path, summary, [problem])
    if not isinstance(payload, dict):
        raise PriceTableError(path, summary, [Problem("top level", kind_of(payload), "a JSON object")])
    try:
        table = PriceTable.model_validate(payload)
    except ValidationError as error:
        raise PriceTableError(path, summary, validation_problems(error, "", separator=".")) from None
    return {name.lower(): price for name, price in table.models.items()}


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
