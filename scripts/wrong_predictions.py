"""Four predictors built to be wrong, as prediction files for `dbgorilla score --execute`.

From an oracle run's results.jsonl (`dbgorilla eval --model oracle --limit 0 --out RUN`), write
`drop_search.jsonl`, `collection_only.jsonl`, `drop_filters.jsonl` and `swap_metrics.jsonl` into
OUT_DIR, each holding the cases the predictor applies to:

    .venv/bin/python scripts/wrong_predictions.py RUN/results.jsonl OUT_DIR
    .venv/bin/dbgorilla score --predictions OUT_DIR/drop_search.jsonl --execute --json

The audit's probes (`evaluation/audit/probes.py`) run the same predictors, and more, on every
`audit-dataset`; this script makes them files a reader can score and inspect.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from executors.vocabulary import AGGREGATION_FIELDS, FIELD_KIND, FILTER_FIELDS, METRICS

Arguments = dict[str, Any]


def drop_search(truth: Arguments) -> Arguments | None:
    return {k: v for k, v in truth.items() if k != "search_query"} if "search_query" in truth else None


def collection_only(truth: Arguments) -> Arguments | None:
    return {"collection_name": truth["collection_name"]}


def drop_filters(truth: Arguments) -> Arguments | None:
    if not any(slot in truth for slot in FILTER_FIELDS):
        return None
    return {k: v for k, v in truth.items() if k not in FILTER_FIELDS}


def swap_metrics(truth: Arguments) -> Arguments | None:
    """Every aggregation asks for another metric of its kind (never TYPE, which any property has)."""
    swapped = dict(truth)
    for slot in AGGREGATION_FIELDS:
        if slot in truth:
            metrics = truth[slot]["metrics"]
            metrics = metrics if isinstance(metrics, list) else [metrics]
            other = next(m for m in METRICS[FIELD_KIND[slot]] if m not in metrics and m != "TYPE")
            swapped[slot] = {**truth[slot], "metrics": other}
    return swapped if swapped != truth else None


PREDICTORS: dict[str, Callable[[Arguments], Arguments | None]] = {
    "drop_search": drop_search,
    "collection_only": collection_only,
    "drop_filters": drop_filters,
    "swap_metrics": swap_metrics,
}


def main() -> None:
    source, out = Path(sys.argv[1]), Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    records = [json.loads(line) for line in source.read_text().splitlines() if line.strip()]
    for name, predict in PREDICTORS.items():
        lines = []
        for record in records:
            arguments = predict(record["ground_truth"])
            if arguments is None:
                continue
            call = {"step": 1, "tool_name": "query_database", "raw_arguments": json.dumps(arguments)}
            call |= {"arguments": arguments, "ok": True}
            lines.append(json.dumps({**record, "predicted_calls": [call], "scores": {}, "model": name}))
        (out / f"{name}.jsonl").write_text("\n".join(lines) + "\n")
        print(f"{name}: {len(lines)} predictions")


if __name__ == "__main__":
    main()
