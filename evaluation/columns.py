"""A column of the report's tables: its key in a row, its header, and how a value is shown.

Here rather than in `evaluation.report` so that an evaluator (`evaluation.evaluators`) can declare
its own leaderboard columns without importing the report that lists them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Column:
    key: str
    header: str
    kind: str = "text"  # text | int | rate | score | usd | seconds

    def show(self, value: Any) -> str:
        """Markdown/HTML text; the CSV keeps raw values (fractions, not percentages)."""
        if value is None:
            return "n/a"
        if self.kind == "rate":
            return f"{value * 100:.1f}%"
        if self.kind == "score":
            return f"{value:.3f}"
        if self.kind == "usd":  # local runs cost fractions of a cent: keep them visible
            return f"${value:.4f}" if value == 0 or value >= 0.01 else f"${value:.6f}"
        if self.kind == "seconds":
            return f"{value:.2f}"
        return str(value)
