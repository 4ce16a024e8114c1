"""Client objects paired with the Python source that builds them, so every call can be shown as code.

An `Expr` is built once: the executor passes `.value` to weaviate-client and the result shows
`.source`. Rendering is therefore the call that was made, not a reconstruction of it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Expr:
    value: Any
    source: str


def literal(value: Any) -> Expr:
    return Expr(value, render_literal(value))


def render_literal(value: Any) -> str:
    """Python source of a plain value; floats keep a decimal point so types stay visible."""
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else f"float({str(value)!r})"
    return repr(value)  # strings whole: the source is run as shown (`executors.snippet`)


def attribute_call(receiver: Expr, method: str, *args: Expr, **kwargs: Expr) -> Expr:
    """`receiver.method(args, kwargs)` both evaluated and rendered."""
    value = getattr(receiver.value, method)(*(a.value for a in args), **{k: v.value for k, v in kwargs.items()})
    return Expr(value, f"{receiver.source}.{method}({render_arguments(args, kwargs)})")


def render_arguments(args: Sequence[Expr], kwargs: dict[str, Expr]) -> str:
    parts = [a.source for a in args] + [f"{name}={expr.source}" for name, expr in kwargs.items()]
    return ", ".join(parts)


def list_expr(items: Sequence[Expr]) -> Expr:
    return Expr([item.value for item in items], "[" + ", ".join(item.source for item in items) + "]")
