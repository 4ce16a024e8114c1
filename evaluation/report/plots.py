"""The report's PNG plots, drawn with matplotlib's object API on the Agg canvas: no pyplot global state,
no display needed, safe to call from threads and tests."""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from typing import Any

from evaluation.evaluators.arguments import COMPONENTS

#: Axis labels: a component's name broken onto two lines at its underscore.
AXIS_LABELS = {component: component.replace("_", "\n") for component in COMPONENTS}
RADAR_PANELS = (
    ("exact_match", "Exact Match on cases using the component\n(the paper's Figure 5)"),
    ("component_accuracy", "The component's own argument correct"),
)
MAX_LEGEND_LABEL = 48


def _figure(width: float, height: float) -> Any:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), dpi=110)
    FigureCanvasAgg(figure)
    return figure


def _png(figure: Any) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", bbox_inches="tight", facecolor="white")
    return buffer.getvalue()


def _short(label: str) -> str:
    return label if len(label) <= MAX_LEGEND_LABEL else "…" + label[-MAX_LEGEND_LABEL + 1 :]


def radar_png(values: dict[str, dict[str, dict[str, Any]]]) -> bytes:
    """One polygon per run over the 8 components; `values[run][component][metric]` is a fraction or None.

    A component no case uses (None) is drawn at 0 and its axis label says "no cases"."""
    angles = [2 * math.pi * i / len(COMPONENTS) for i in range(len(COMPONENTS))]
    figure = _figure(12, 6.0)
    import matplotlib

    cycle = matplotlib.colormaps["tab10"]
    for panel, (metric, title) in enumerate(RADAR_PANELS, start=1):
        axes = figure.add_subplot(1, 2, panel, projection="polar")
        axes.set_theta_offset(math.pi / 2)
        axes.set_theta_direction(-1)
        for index, (run, components) in enumerate(values.items()):
            points = [components[c].get(metric) for c in COMPONENTS]
            closed = [p or 0.0 for p in points] + [points[0] or 0.0]
            colour = cycle(index % 10)
            axes.plot([*angles, angles[0]], closed, color=colour, linewidth=2, label=_short(run))
            axes.fill([*angles, angles[0]], closed, color=colour, alpha=0.12)
        empty = {c for c in COMPONENTS if all(v[c].get("cases", 0) == 0 for v in values.values())}
        axes.set_xticks(angles)
        axes.set_xticklabels([AXIS_LABELS[c] + ("\n(no cases)" if c in empty else "") for c in COMPONENTS], fontsize=9)
        axes.tick_params(axis="x", pad=10)
        axes.set_ylim(0, 1)
        axes.set_yticks([0.25, 0.5, 0.75, 1.0])
        axes.set_yticklabels(["25%", "50%", "75%", "100%"], fontsize=7, color="#666666")
        axes.set_rlabel_position(22.5)
        axes.set_title(title, fontsize=11, pad=26)
    handles, labels = figure.axes[0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="lower center", ncol=min(3, max(1, len(labels))), frameon=False, fontsize=9)
    figure.subplots_adjust(bottom=0.05 + 0.035 * math.ceil(len(labels) / 3), top=0.86, wspace=0.45)
    return _png(figure)


def use_case_png(rows: Sequence[dict[str, Any]], runs: Sequence[str]) -> bytes:
    """Grouped bars per use case: Exec exact (final) where it was scored, else Exact Match (first), per run."""
    import matplotlib

    use_cases = sorted({row["use_case"] for row in rows})
    by_key = {(row["use_case"], row["run"]): row for row in rows}
    scored = any(row.get("final.execution_match_exact") is not None for row in rows)
    metric = "final.execution_match_exact" if scored else "first.exact_match"
    cycle = matplotlib.colormaps["tab10"]
    figure = _figure(max(7.5, 1.3 * len(use_cases) * max(1, len(runs)) ** 0.5 + 2), 4.2)
    axes = figure.add_subplot(1, 1, 1)
    width = 0.8 / max(1, len(runs))
    for index, run in enumerate(runs):
        xs = [u + (index - (len(runs) - 1) / 2) * width for u in range(len(use_cases))]
        heights = [(by_key.get((use_case, run)) or {}).get(metric) or 0.0 for use_case in use_cases]
        axes.bar(xs, heights, width=width, color=cycle(index % 10), label=_short(run))
    axes.set_xticks(range(len(use_cases)))
    axes.set_xticklabels([u.replace("_", " ") for u in use_cases], fontsize=9)
    axes.set_ylim(0, 1)
    axes.set_yticks([0, 0.25, 0.5, 0.75, 1.0])
    axes.set_yticklabels(["0%", "25%", "50%", "75%", "100%"], fontsize=8)
    axes.grid(axis="y", color="#dddddd")
    axes.set_axisbelow(True)
    axes.spines[["top", "right"]].set_visible(False)
    axes.set_title("Exec exact (final) by use case" if scored else "Exact Match (first) by use case", fontsize=11)
    axes.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=min(3, max(1, len(runs))), frameon=False)
    return _png(figure)


def pass_rate_png(rows: Sequence[dict[str, Any]]) -> bytes:
    """Each run's pass rate per question kind as a dot with its Wilson 95% interval: a 15-question run
    shows a wide bar, and two runs whose bars overlap are not told apart by this plot."""
    import matplotlib

    cycle = matplotlib.colormaps["tab10"]
    runs = list(dict.fromkeys(row["run"] for row in rows))
    figure = _figure(8.5, max(3.0, 0.42 * len(rows) + 1.4))
    axes = figure.add_subplot(1, 1, 1)
    for position, row in enumerate(rows):
        low, high = row["pass_bounds"] or (0.0, 0.0)
        rate = row["pass_rate"] or 0.0
        colour = cycle(runs.index(row["run"]) % 10)
        axes.errorbar(rate, position, xerr=[[rate - low], [high - rate]], fmt="o", color=colour, capsize=4)
        axes.annotate(f"{rate:.0%} [{low:.0%}, {high:.0%}], n={row['cases']}", (1.02, position), fontsize=8,
                      va="center", xycoords=("axes fraction", "data"))  # fmt: skip
    axes.set_yticks(range(len(rows)))
    axes.set_yticklabels([_short(f"{row['run']} · {row['kind']}") for row in rows], fontsize=8)
    axes.invert_yaxis()
    axes.set_xlim(-0.02, 1.02)  # a dot at 0% or 100% stays whole
    axes.set_xticks([0, 0.25, 0.5, 0.75, 1.0])
    axes.set_xticklabels(["0%", "25%", "50%", "75%", "100%"], fontsize=8)
    axes.grid(axis="x", color="#dddddd")
    axes.set_axisbelow(True)
    axes.spines[["top", "right"]].set_visible(False)
    axes.set_title("Pass rate with its Wilson 95% interval, by question kind", fontsize=11)
    return _png(figure)
