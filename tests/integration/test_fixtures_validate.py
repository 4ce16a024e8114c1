"""`dbgorilla audit-dataset`: labels execute, answer something, and tell their mutants apart.

The benchmark figures are whatever the tool measures on the default data; the tests hold them to
the targets and check the report's structure. A hand-made dataset proves that errors, vacuous
answers and invalid DBGorilla labels are reported, and the mutant derivation is checked offline
(on the generated objects and the schema the loader creates).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dbgorilla.connection import connect
from evaluation.audit import (
    MIN_CROSSED_SHARE,
    MUTATION_KINDS,
    TARGETS,
    AuditReport,
    audit_dataset,
    derive_mutants,
    flatten,
    like_variant,
    use_case_context,
    with_component,
)
from evaluation.audit.probes import PROBE_LIMIT, PROBE_SCORES
from executors import ExecutorOptions, ReferenceExecutor, validate_arguments
from executors.arguments import QueryDatabaseArguments
from executors.reference import DataObject, matches
from executors.vocabulary import COMPONENT_OF_FIELD
from fixtures import database_schema_of, generate_objects, get_use_cases, load_split, load_use_cases, split_path
from tests.conftest import run_cli

pytestmark = pytest.mark.integration
#: The default split (natural), which the audit runs on when no path is given.
RECORDS = {r.id: r for r in load_split()}
EXPLICIT = {r.id: r for r in load_split(split_path("explicit"))}
REPORT_KEYS = {
    "queries",
    "invalid_labels",
    "execution_errors",
    "non_vacuous_rate",
    "mutation_sensitivity",
    "mutants",
    "survivors",
    "vacuous",
}


@pytest.fixture(scope="module")
def audited(weaviate_stack: Any) -> dict[str, Any]:
    """`audit-dataset --json` of our benchmark on the default data (loaded if needed; nothing is dropped),
    run once: the command's JSON is the report every test below reads."""
    with connect(weaviate_stack.settings) as live:
        assert load_use_cases(live, "all").ok  # idempotent: converges to the default size and seed
    result = run_cli("audit-dataset", "--json", env=weaviate_stack.env)
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def report(audited: dict[str, Any]) -> AuditReport:
    return AuditReport.model_validate(audited)


def changed_components(before: QueryDatabaseArguments, after: QueryDatabaseArguments) -> set[str]:
    left, right = flatten(before), flatten(after)
    return {key for key in left.keys() | right.keys() if left.get(key) != right.get(key)}


# ----------------------------------------------------------------------------------------------
# Our benchmark


def test_benchmark_meets_the_targets(report: AuditReport) -> None:
    assert report.queries == len(RECORDS) == 315
    assert report.invalid_labels == 0 and report.executed == 315
    assert report.execution_errors == 0, report.errors
    assert report.non_vacuous_rate >= TARGETS["non_vacuous_rate"], report.vacuous
    assert report.mutation_sensitivity >= TARGETS["mutation_sensitivity"], report.by_kind
    assert report.ok and report.failed_targets == []
    assert report.seconds < 120


def test_benchmark_report_counts_add_up(report: AuditReport) -> None:
    assert 0.0 <= report.non_vacuous_rate <= 1.0 and 0.0 <= report.mutation_sensitivity <= 1.0
    assert set(report.by_kind) == set(MUTATION_KINDS)
    assert report.mutants == sum(k.mutants for k in report.by_kind.values()) > len(RECORDS)
    assert report.killed == sum(k.killed for k in report.by_kind.values())
    assert report.mutants - report.killed == len(report.survivors)
    assert report.mutation_sensitivity == pytest.approx(report.killed / report.mutants)
    assert report.mutant_errors == []  # every mutant is a valid call, so it runs
    # our use cases have one number and one boolean property per collection: no property mutants there
    assert report.by_kind["property"].skipped > 0


def test_the_explicit_split_meets_the_targets_too(client: Any, report: AuditReport) -> None:
    explicit = audit_dataset(client, split_path("explicit"))
    assert explicit.queries == 315 and explicit.ok, explicit.failed_targets
    assert explicit.alternatives_checked == sum(len(r.alternatives) for r in EXPLICIT.values())


def test_survivors_are_listed_with_valid_single_component_mutants(report: AuditReport) -> None:
    # few near misses survive (the composer avoids them), and those that do are listed
    assert len(report.survivors) <= 0.01 * report.mutants
    for survivor in report.survivors:
        assert survivor.kind in MUTATION_KINDS
        assert survivor.mutation.startswith(f"{survivor.field}: ") and " -> " in survivor.mutation
        mutant = QueryDatabaseArguments.model_validate(survivor.arguments)
        truth = RECORDS[survivor.id].ground_truth
        assert changed_components(truth, mutant) == {survivor.field}


def test_every_component_tells_its_mutants_apart(report: AuditReport) -> None:
    assert {"search", "integer_filter", "text_filter", "boolean_filter", "groupby"} <= set(report.by_component)
    for component, summary in report.by_component.items():
        assert summary.sensitivity is not None and summary.sensitivity >= TARGETS["component_sensitivity"], component
    # the drop-search mutant exists for every search label and never survives
    searches = sum(1 for r in RECORDS.values() if r.ground_truth.search_query is not None)
    assert report.by_component["search"].mutants >= searches
    assert report.by_component["search"].killed == report.by_component["search"].mutants


def test_no_ties_and_alternatives_agree(report: AuditReport) -> None:
    assert report.ties == []
    assert report.alternatives_checked == sum(len(r.alternatives) for r in RECORDS.values()) > 0
    assert report.alternative_mismatches == []


def test_search_finds_its_topics_in_every_use_case(report: AuditReport) -> None:
    assert set(report.search_relevance) == {r.use_case for r in RECORDS.values()}
    for use_case, relevance in report.search_relevance.items():
        assert relevance.queries >= 20, use_case
        assert relevance.precision >= 0.7 and relevance.recall >= 0.5, (use_case, relevance)


def test_probes_built_to_be_wrong_earn_nothing_and_gold_everything(report: AuditReport) -> None:
    probes = report.probes
    assert {"gold", "no_call", "collection_only", "everything", "hedge", "drop_search", "swap_operator"} <= set(probes)
    for protocol in ("first", "final"):
        assert probes["gold"].rates[protocol] == dict.fromkeys(PROBE_SCORES, 1.0)
    for name, summary in probes.items():
        assert summary.predictions > 0, name
        if name != "gold":
            assert summary.worst <= PROBE_LIMIT, (name, summary.rates, summary.examples)
    assert probes["drop_search"].questions == sum(1 for r in RECORDS.values() if r.ground_truth.search_query)


def test_cli_json_on_the_benchmark(audited: dict[str, Any], report: AuditReport) -> None:
    payload = audited
    assert set(payload) >= REPORT_KEYS
    assert payload["queries"] == 315 and payload["invalid_labels"] == 0 and payload["execution_errors"] == 0
    assert 0.95 <= payload["non_vacuous_rate"] <= 1.0
    assert 0.90 <= payload["mutation_sensitivity"] <= 1.0
    assert payload["ok"] is True and payload["failed_targets"] == []
    # the JSON is the whole report: it reads back into the same verdicts
    assert report.model_dump(mode="json") == payload
    assert payload["mutants"] == report.mutants
    assert len(payload["survivors"]) == len(report.survivors)
    for survivor in payload["survivors"]:
        assert {"id", "mutation", "arguments"} <= set(survivor)
        assert survivor["id"] in RECORDS and isinstance(survivor["arguments"], dict)
    assert isinstance(payload["vacuous"], list)


# ----------------------------------------------------------------------------------------------
# A hand-made dataset


def benchmark_line(record_id: str, query: str, ground_truth: dict[str, Any]) -> str:
    arguments = QueryDatabaseArguments.model_validate(ground_truth)
    used = arguments.components()
    record = {
        "id": record_id,
        "version": 1,
        "use_case": "restaurants",
        "query": query,
        "ground_truth": ground_truth,
        "complexity": ["simple", "moderate", "complex"][min(len(used), 3) - 1],
        "components": [COMPONENT_OF_FIELD[name].value for name in used],
    }
    return json.dumps(record)


@pytest.fixture()
def hand_made(tmp_path: Path) -> Path:
    path = tmp_path / "hand_made.jsonl"
    lines = [
        benchmark_line(
            "hand-001",
            "Which restaurants are open now?",
            {
                "collection_name": "Restaurants",
                "boolean_property_filter": {"property_name": "openNow", "operator": "=", "value": True},
            },
        ),
        benchmark_line(
            "hand-002",
            "Which restaurants serve Martian food?",
            {
                "collection_name": "Restaurants",
                "text_property_filter": {"property_name": "cuisine", "operator": "=", "value": "Martian"},
            },
        ),
        benchmark_line(
            "hand-003",
            "Which restaurants have a rating of at least zero?",
            {
                "collection_name": "Restaurants",
                "integer_property_filter": {"property_name": "averageRating", "operator": ">=", "value": 0},
            },
        ),
        benchmark_line(
            "hand-004",
            "Which restaurants have more than 50 seats?",
            {
                "collection_name": "Restaurants",
                "integer_property_filter": {"property_name": "seats", "operator": ">", "value": 50},
            },
        ),
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_hand_made_dataset_reports_errors_and_vacuous_answers(client: Any, hand_made: Path) -> None:
    assert load_use_cases(client, ["restaurants"]).ok
    report = audit_dataset(client, hand_made)
    assert report.queries == 4 and report.invalid_labels == 0
    assert report.execution_errors == 1
    (error,) = report.errors
    assert error.id == "hand-004" and error.code == "unknown_property" and "seats" in error.message
    assert {(v.id, v.reason) for v in report.vacuous} == {("hand-002", "empty"), ("hand-003", "all_objects")}
    assert report.non_vacuous_rate == pytest.approx(1 / 3)
    assert not report.ok
    failed = " ".join(report.failed_targets)
    assert "execution_errors" in failed and "non_vacuous_rate" in failed
    # the labels that ran were mutated; the one that failed was not
    assert report.mutants > 0 and all(s.id != "hand-004" for s in report.survivors)


def test_cli_names_the_missed_targets(weaviate_stack: Any, hand_made: Path) -> None:
    result = run_cli("audit-dataset", str(hand_made), "--json", env=weaviate_stack.env)
    assert result.returncode == 1, result.stderr[-2000:]
    payload = json.loads(result.stdout)
    assert payload["execution_errors"] == 1 and payload["errors"][0]["code"] == "unknown_property"
    assert {v["id"] for v in payload["vacuous"]} == {"hand-002", "hand-003"}
    assert "target missed" in result.stderr and "non_vacuous_rate" in result.stderr
    readable = run_cli("audit-dataset", str(hand_made), env=weaviate_stack.env)
    assert readable.returncode == 1
    assert "vacuous ground truths" in readable.stdout and "unknown_property" in readable.stdout
    assert "gameability probes" in readable.stdout and "drop_integer_filter" in readable.stdout


def dbgorilla_record(query: dict[str, Any]) -> dict[str, Any]:
    schema = {
        "weaviate_collections": [
            {
                "name": "ValidateProbeShops",
                "properties": [
                    {"name": "category", "data_type": ["string"], "description": "The kind of shop."},
                    {"name": "description", "data_type": ["string"], "description": "A description of the shop."},
                    {"name": "rating", "data_type": ["number"], "description": "The average rating out of 5."},
                    {"name": "openLate", "data_type": ["boolean"], "description": "Whether it opens late."},
                ],
                "envisioned_use_case_overview": "Shops to browse by kind and rating.",
            }
        ]
    }
    return {"database_schema": json.dumps(schema), "query": query}


def test_dbgorilla_labels_that_cannot_run_are_counted_not_executed(client: Any, tmp_path: Path) -> None:
    path = tmp_path / "dbgorilla.json"
    records = [
        dbgorilla_record(
            {
                "corresponding_natural_language_query": "Which shops are open late?",
                "target_collection": "ValidateProbeShops",
                "boolean_property_filter": {"property_name": "openLate", "operator": "=", "value": True},
            }
        ),
        dbgorilla_record(  # a text filter on a boolean property: cannot run as written
            {
                "corresponding_natural_language_query": "Which shops are open late?",
                "target_collection": "ValidateProbeShops",
                "text_property_filter": {"property_name": "openLate", "operator": "=", "value": "yes"},
            }
        ),
    ]
    path.write_text(json.dumps(records))
    try:
        report = audit_dataset(client, path)  # loads the probe collection (default size and seed)
        assert report.queries == 2 and report.invalid_labels == 1 and report.executed == 1
        assert report.invalid_label_ids == ["dbgorilla-0001"]
        assert report.execution_errors == 0 and report.non_vacuous_rate == 1.0
        assert report.mutants >= 2  # the boolean filter's operator and value
    finally:
        if client.collections.exists("ValidateProbeShops"):  # our own probe, not a shared use case
            client.collections.delete("ValidateProbeShops")


# ----------------------------------------------------------------------------------------------
# Mutant derivation (offline: the loader's schema and the generated objects)


@pytest.fixture(scope="module")
def offline() -> tuple[Any, dict[str, list[dict[str, Any]]], Any]:
    use_cases = get_use_cases()
    schema = database_schema_of(use_cases)
    objects = {c.name: [o.properties for o in generate_objects(c)] for u in use_cases for c in u.collections}
    return schema, objects, use_case_context(schema, use_cases, objects)


def test_each_mutant_changes_exactly_one_component_and_is_a_valid_call(offline: Any) -> None:
    schema, _, context = offline
    kinds: set[str] = set()
    for record in RECORDS.values():
        mutants, skipped = derive_mutants(record.ground_truth, context)
        keys = [m.arguments.to_tool_arguments() for m in mutants]
        assert len({json.dumps(k, sort_keys=True) for k in keys}) == len(mutants), f"{record.id}: duplicate mutants"
        for mutant in mutants:
            kinds.add(mutant.kind)
            validate_arguments(mutant.arguments, schema)  # raises if the mutant is not a valid call
            if mutant.kind == "drop":  # the whole slot goes
                assert mutant.after is None and getattr(mutant.arguments, mutant.field) is None, record.id
                assert record.ground_truth.to_tool_arguments()[mutant.field] == mutant.before
                continue
            assert changed_components(record.ground_truth, mutant.arguments) == {mutant.field}, record.id
            assert flatten(record.ground_truth)[mutant.field] == mutant.before != mutant.after
        for entry in skipped:
            kind, _, field = entry.partition(":")
            assert kind in MUTATION_KINDS and field in flatten(record.ground_truth)
    assert kinds == set(MUTATION_KINDS)


def test_mutation_kinds_follow_the_rules(offline: Any) -> None:
    schema, objects, context = offline

    def mutants_of(record_id: str) -> dict[str, list[Any]]:
        mutants, _ = derive_mutants(EXPLICIT[record_id].ground_truth, context)
        by_field: dict[str, list[Any]] = {}
        for mutant in mutants:
            by_field.setdefault(mutant.field, []).append(mutant.after)
        return by_field

    # courses-016: Courses, subject = "History" (short text, no wildcard)
    history = mutants_of("courses-016")
    assert "text_property_filter.operator" not in history  # `=` <-> LIKE without wildcards: same meaning
    assert history["text_property_filter.property_name"] == ["description"]  # the other text property
    (other,) = history["text_property_filter.value"]
    assert other != "History" and other in {o["subject"] for o in objects["Courses"]}
    # courses-022: subject LIKE "P*" keeps its shape
    (prefix,) = mutants_of("courses-022")["text_property_filter.value"]
    assert len(prefix) == 2 and prefix.endswith("*") and prefix != "P*"
    assert like_variant("*Sciences", "Fine Arts") == "*Arts" and like_variant("Fall*", "Spring 2025") == "Spring*"
    assert like_variant("*python*", "essays") == "*essays*" and like_variant("P*", "History") == "H*"

    for record in EXPLICIT.values():
        truth = record.ground_truth
        by_field = mutants_of(record.id)
        if truth.boolean_property_filter is not None:
            assert by_field["boolean_property_filter.value"] == [not truth.boolean_property_filter.value]
            assert by_field["boolean_property_filter.operator"] == [
                "!=" if truth.boolean_property_filter.operator.value == "=" else "="
            ]
        if truth.integer_property_filter is not None:
            assert len(by_field["integer_property_filter.operator"]) == 4
            assert "integer_property_filter.property_name" not in by_field  # one number property only
            (threshold,) = by_field["integer_property_filter.value"]
            collection = schema.get(truth.collection_name)
            spec = validate_arguments(truth, schema).filters[0]
            moved_arguments = with_component(truth, "integer_property_filter.value", threshold)
            moved = validate_arguments(moved_arguments, schema).filters[0]
            rows = objects[truth.collection_name]
            before = {i for i, o in enumerate(rows) if matches(spec, o, collection)}
            after = {i for i, o in enumerate(rows) if matches(moved, o, collection)}
            assert 0 < len(after) < len(rows)
            assert len(before ^ after) >= max(1, MIN_CROSSED_SHARE * len(rows))
        for field in ("integer_property_aggregation.metrics", "boolean_property_aggregation.metrics"):
            if field in flatten(truth):
                assert len(by_field[field]) == (7 if field.startswith("integer") else 5)
        if truth.groupby_property is not None:
            prose = context.prose[truth.collection_name]
            assert by_field["groupby_property"] and not set(by_field["groupby_property"]) & prose
        # collection mutants: a sibling with the label's properties under the same names (travel_planning's
        # Destinations and Activities share `description`), or any sibling for a search without properties
        for sibling in by_field.get("collection_name", []):
            assert sibling in context.siblings[truth.collection_name]
            used = {key.split(".")[0] for key in flatten(truth)} - {"collection_name", "search_query"}
            assert record.use_case == "travel_planning" or not used


def test_surviving_mutants_are_really_indistinguishable_offline(offline: Any) -> None:
    """Cross-check on the reference executor: a strict/inclusive swap survives, a flipped boolean does not."""
    from evaluation.execution_match import SCORING_OPTIONS, compare

    schema, objects, context = offline
    reference = ReferenceExecutor(
        schema,
        {
            name: [DataObject(uuid=f"00000000-0000-0000-0000-{i:012d}", properties=o) for i, o in enumerate(rows)]
            for name, rows in objects.items()
        },
        ExecutorOptions.model_validate(SCORING_OPTIONS.model_dump()),
    )
    survived = killed = 0
    for record in RECORDS.values():
        if record.ground_truth.search_query is not None:
            continue
        truth = reference.execute(record.ground_truth)
        for mutant in derive_mutants(record.ground_truth, context)[0]:
            same = compare(truth, reference.execute(mutant.arguments)).exact
            if mutant.kind in ("metric", "groupby", "collection"):
                assert not same  # results keyed by metric, group value and collection never coincide
            if mutant.field == "boolean_property_filter.value":
                assert not same
            survived += same
            killed += not same
    assert killed / (killed + survived) >= TARGETS["mutation_sensitivity"]
