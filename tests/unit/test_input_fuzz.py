"""Every reader of a user's file, fed truncated, mutated and random files: it parses, or it raises its
own typed error naming the file; never anything else (issue 30).

Each test counts the examples it ran and what became of them; `pytest -s` prints the counts.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaluation.predictions import PredictionFileError, read_predictions, rescore
from evaluation.records import EvalRecord, Outcome, PredictedCall, ResultsFileError, read_results
from evaluation.report.prices import DEFAULT_PRICES, PriceTableError, load_prices
from fixtures.datasets import (
    PAPER_EXAMPLE_PATH,
    DatasetFileError,
    PaperFileError,
    load_paper_dataset,
    read_dataset,
    read_split,
    split_path,
)

#: Examples per test (DBGORILLA_FUZZ_EXAMPLES for a longer hunt): 7 x 1,000 take about 30 s on 2 cores.
EXAMPLES = int(os.environ.get("DBGORILLA_FUZZ_EXAMPLES", "1000"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _lines(split: str, count: int) -> list[str]:
    return split_path(split).read_text(encoding="utf-8").splitlines()[:count]


#: A small split touching every record type: plain cases, a multi-step one (chain and answer), abstentions.
SPLIT = ("\n".join([*_lines("natural", 4), *_lines("multistep", 2), *_lines("abstention", 2)]) + "\n").encode()
PAPER = PAPER_EXAMPLE_PATH.read_bytes()
PRICES = DEFAULT_PRICES.read_bytes()


def _results_sample() -> bytes:
    """Records as `eval` writes them (scored offline): a call that ran, a call that failed, no call."""
    cases = read_dataset().cases[:3]
    records = []
    for index, case in enumerate(cases):
        arguments = case.ground_truth.to_tool_arguments()
        calls = [
            PredictedCall(
                tool_name="query_database", raw_arguments=json.dumps(arguments), arguments=arguments, ok=True
            ),
            PredictedCall(step=1, tool_name="query_database", raw_arguments="{", error_code="invalid_arguments"),
        ][: 2 - index]
        outcome = Outcome.OK if calls else Outcome.NO_TOOL_CALL
        records.append(
            EvalRecord.for_case(case, model="m", tool_design="unified", predicted_calls=calls, outcome=outcome)
        )
    return "".join(r.model_dump_json() + "\n" for r in rescore(records, None)).encode()


RESULTS = _results_sample()
PAPER_RESULTS = json.dumps(
    {
        "model_name": "some-model",
        "detailed_results": [
            {
                "query_index": 0,
                "natural_language_query": "q",
                "ground_truth_query": {"target_collection": "restaurants", "search_query": "pizza"},
                "predicted_query": {"target_collection": "Restaurants", "search_query": "pizza"},
                "ast_score": 1.0,
                "error": None,
            },
            {"query_index": 1, "ground_truth_query": {"target_collection": "menus"}, "predicted_query": None},
        ],
    },
    indent=1,
).encode()

JSON_LEAF = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=20)
JSON_VALUE = st.recursive(
    JSON_LEAF,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12,
)


@st.composite
def mutated(draw: st.DrawFn, valid: bytes) -> bytes:
    """A valid file with a few bytes replaced, inserted or deleted."""
    data = bytearray(valid)
    for _ in range(draw(st.integers(1, 8))):
        at = draw(st.integers(0, max(0, len(data) - 1)))
        action = draw(st.sampled_from(["replace", "insert", "delete"]))
        byte = draw(st.sampled_from(b'{}[]",:0 \n\\x\xff') | st.integers(0, 255))
        if action == "replace" and data:
            data[at] = byte
        elif action == "insert":
            data.insert(at, byte)
        elif data:
            del data[at]
    return bytes(data)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path into a parsed JSON value (objects and lists), the value itself included."""
    found = [prefix]
    if isinstance(value, dict):
        for key, inner in value.items():
            found += _paths(inner, (*prefix, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            found += _paths(inner, (*prefix, index))
    return found


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[path[0]] = _replace(value[path[0]], path[1:], new)
    return copy


@st.composite
def reshaped(draw: st.DrawFn, valid: bytes, per_line: bool, focus: tuple[str, ...] = ()) -> bytes:
    """Valid JSON with one value somewhere replaced by a random one (or a key dropped): it reaches the
    models' validators, where byte noise rarely gets. `focus`: only under these top-level keys."""
    docs = (
        [json.loads(line) for line in valid.decode().splitlines() if line.strip()] if per_line else [json.loads(valid)]
    )
    which = draw(st.integers(0, len(docs) - 1))
    paths = [p for p in _paths(docs[which]) if not focus or (p and p[0] in focus)]
    path = draw(st.sampled_from(paths))
    if path and draw(st.booleans()) and isinstance(parent := _get(docs[which], path[:-1]), dict):
        docs[which] = _replace(docs[which], path[:-1], {k: v for k, v in parent.items() if k != path[-1]})
    else:
        docs[which] = _replace(docs[which], path, draw(JSON_VALUE))
    return ("\n".join(json.dumps(d) for d in docs) + "\n").encode() if per_line else json.dumps(docs[0]).encode()


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        value = value[part]
    return value


def files(valid: bytes, per_line: bool, focus: tuple[str, ...] = ()) -> st.SearchStrategy[tuple[str, bytes]]:
    """(kind, bytes): a truncated, byte-mutated, reshaped or random file."""
    truncated = st.integers(0, len(valid)).map(lambda n: valid[:n])
    random_lines = st.lists(JSON_VALUE.map(json.dumps), max_size=5).map(lambda ls: "\n".join(ls).encode())
    kinds = [
        st.tuples(st.just("truncated"), truncated),
        st.tuples(st.just("mutated"), mutated(valid)),
        st.tuples(st.just("reshaped"), reshaped(valid, per_line)),
        st.tuples(st.just("random bytes"), st.binary(max_size=600)),
        st.tuples(st.just("random JSON"), random_lines),
    ]
    if focus:
        kinds.append(st.tuples(st.just("reshaped " + "/".join(focus)), reshaped(valid, per_line, focus)))
    return st.one_of(*kinds)


def fuzz(
    tmp_path: Path,
    name: str,
    valid: bytes,
    per_line: bool,
    read: Callable[[Path], Any],
    error: type[Exception],
    focus: tuple[str, ...] = (),
) -> Counter[str]:
    """Feed `read` EXAMPLES files; every one parses or raises `error` naming the file. Returns the counts."""
    path = tmp_path / name
    counts: Counter[str] = Counter()

    @FUZZ
    @given(files(valid, per_line, focus))
    def check(case: tuple[str, bytes]) -> None:
        kind, data = case
        path.write_bytes(data)
        counts["examples"] += 1
        try:
            read(path)
        except error as raised:
            assert str(raised).startswith(str(path)), raised
            counts[f"{kind}: typed error"] += 1
        else:
            counts[f"{kind}: parsed"] += 1

    check()
    print(f"\n{name} ({read.__qualname__}): {dict(sorted(counts.items()))}")
    assert counts["examples"] >= EXAMPLES
    assert sum(n for k, n in counts.items() if k.endswith("typed error")) > 0
    return counts


def test_fuzz_the_split_reader(tmp_path: Path) -> None:
    counts = fuzz(tmp_path, "split.jsonl", SPLIT, True, read_split, DatasetFileError)
    assert sum(n for k, n in counts.items() if k.endswith("parsed")) > 0  # the valid file's neighbours parse too


def test_fuzz_read_dataset_either_format(tmp_path: Path) -> None:
    fuzz(tmp_path, "dataset.jsonl", SPLIT, True, read_dataset, DatasetFileError)


def test_fuzz_the_paper_reader(tmp_path: Path) -> None:
    counts = fuzz(tmp_path, "paper.json", PAPER, False, load_paper_dataset, PaperFileError)
    assert sum(n for k, n in counts.items() if k.endswith("parsed")) > 0


def test_fuzz_the_results_reader(tmp_path: Path) -> None:
    fuzz(tmp_path, "results.jsonl", RESULTS, True, read_results, ResultsFileError)


def test_fuzz_the_prediction_reader_and_offline_scoring(tmp_path: Path) -> None:
    """What `score` does with a file: read it, then score what was read (a record the reader lets through
    must not crash the scorer either)."""

    def score(path: Path) -> None:
        rescore(read_predictions(path).records, None)

    focus = ("ground_truth", "predicted_calls", "final_answer", "chain", "answer", "expected")
    fuzz(tmp_path, "predictions.jsonl", RESULTS, True, score, PredictionFileError, focus)


def test_fuzz_the_paper_result_reader_and_offline_scoring(tmp_path: Path) -> None:
    def score(path: Path) -> None:
        rescore(read_predictions(path, strict=True).records, None)

    fuzz(tmp_path, "paper_results.json", PAPER_RESULTS, False, score, PredictionFileError, ("detailed_results",))


def test_fuzz_the_price_table_reader(tmp_path: Path) -> None:
    fuzz(tmp_path, "prices.json", PRICES, False, load_prices, PriceTableError)
