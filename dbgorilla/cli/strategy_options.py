"""`--strategy` for `eval`, `ask` and `ablate`: one option, one check (a bad name is a usage error)."""

from __future__ import annotations

from typing import Annotated

import typer

from agent.strategies import DEFAULT_STRATEGY, STRATEGIES, UnknownStrategy, canonical
from dbgorilla.errors import ConfigError

__all__ = ["DEFAULT_STRATEGY", "StrategyOption", "check_strategy"]

StrategyOption = Annotated[
    str,
    typer.Option(
        "--strategy",
        help="Agent strategy (docs/strategies.md): " + ", ".join(STRATEGIES) + "; compose with + (examples+grounded).",
    ),
]


def check_strategy(name: str) -> str:
    """The canonical name, or a configuration error naming the strategies there are."""
    try:
        return canonical(name)
    except UnknownStrategy as error:
        raise ConfigError(str(error)) from None
