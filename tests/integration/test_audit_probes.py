"""The audit's probes, tie checks and alternative checks fail on labels built to be untrustworthy.

Each label here is wrong on purpose, on the default restaurants data: a filter that keeps every
object (so dropping it changes nothing), an alternative that gives another result, a
TOP_OCCURRENCES cut through a tie. The audit must name each problem and fail.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from evaluation.audit import audit_dataset
from evaluation.audit.probes import PROBE_LIMIT
from evaluation.search_cut import TIED
from fixtures import generate_objects, get_use_case, load_use_cases
from tests.integration.test_fixtures_validate import benchmark_line

pytestmark = pytest.mark.integration


def tied_top_limit() -> int:
    """A TOP_OCCURRENCES limit k whose k-th and (k+1)-th cuisines are equally common on the default data."""
    restaurants = get_use_case("restaurants").get_collection("Restaurants")
    assert restaurants is not None
    counts = [n for _, n in Counter(o.properties["cuisine"] for o in generate_objects(restaurants)).most_common()]
    tied = [k for k in range(1, len(counts)) if counts[k - 1] == counts[k]]
    assert tied, f"no tie among the cuisine counts {counts}"
    return tied[0]


def with_alternatives(line: str, alternatives: list[dict[str, Any]]) -> str:
    record = json.loads(line)
    record["alternatives"] = alternatives
    return json.dumps(record)


@pytest.fixture()
def untrustworthy(tmp_path: Path) -> Path:
    rating_at_least_zero = {"property_name": "averageRating", "operator": ">=", "value": 0}
    lines = [
        benchmark_line(
            "bad-001",
            "How many open restaurants are there, by cuisine?",
            {
                "collection_name": "Restaurants",
                "integer_property_filter": rating_at_least_zero,  # keeps every object: dropping it changes nothing
                "boolean_property_filter": {"property_name": "openNow", "operator": "=", "value": True},
                "groupby_property": "cuisine",
            },
        ),
        with_alternatives(
            benchmark_line(
                "bad-002",
                "Which restaurants are open now?",
                {
                    "collection_name": "Restaurants",
                    "boolean_property_filter": {"property_name": "openNow", "operator": "=", "value": True},
                },
            ),
            [
                {
                    "collection_name": "Restaurants",
                    "boolean_property_filter": {"property_name": "openNow", "operator": "=", "value": False},
                }
            ],
        ),
        benchmark_line(
            "bad-003",
            "What are the most common cuisines?",
            {
                "collection_name": "Restaurants",
                "text_property_aggregation": {
                    "property_name": "cuisine",
                    "metrics": "TOP_OCCURRENCES",
                    "top_occurrences_limit": tied_top_limit(),
                },
            },
        ),
    ]
    path = tmp_path / "untrustworthy.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_the_audit_names_every_untrustworthy_label(client: Any, untrustworthy: Path) -> None:
    assert load_use_cases(client, ["restaurants"]).ok
    report = audit_dataset(client, untrustworthy)
    assert report.execution_errors == 0
    failed = " ".join(report.failed_targets)
    assert not report.ok

    # dropping a filter that keeps everything earns full marks: the probe says so and fails the audit
    drop = report.probes["drop_integer_filter"]
    assert drop.questions == 1 and drop.worst == 1.0 and drop.examples == ["bad-001"]
    assert f"probe drop_integer_filter earns 1.000 > {PROBE_LIMIT:g}" in failed
    assert "integer_filter mutation_sensitivity" in failed
    # the gold labels still earn everything, and the probes that should earn nothing do
    assert report.probes["gold"].least == 1.0
    assert report.probes["collection_only"].worst == 0.0 and report.probes["hedge"].worst == 0.0

    (mismatch,) = report.alternative_mismatches
    assert mismatch.id == "bad-002" and mismatch.alternative["boolean_property_filter"]["value"] is False
    assert report.alternatives_checked == 1 and "alternative_mismatches 1" in failed

    # a top-k that ties at this size has no stable gold here (evaluation.search_cut): it is named apart,
    # not scored and not counted as a tie (its gold is arbitrary at this size, not wrong)
    (unstable,) = report.unstable
    assert unstable.id == "bad-003" and TIED in unstable.detail and "places" in unstable.detail
    assert not report.ties and "ties" not in failed
