"""The unseen split: the committed file is what its author writes now, and its tables stay out of the public suite.

Its questions measure generality only while nothing tuned on the public suite reads them: the tables must not
be among the public suite's, and the questions are never edited after a run (their sha256 is in the meta file).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

from fixtures import public_suite, unseen_suite
from fixtures.authoring import unseen as unseen_questions

SPLIT = unseen_questions.SPLITS / "unseen.jsonl"
META = unseen_questions.SPLITS / "unseen.meta.json"


def test_committed_split_is_what_the_author_writes(tmp_path: Path) -> None:
    split, meta = unseen_questions.write(tmp_path)
    assert split.read_bytes() == SPLIT.read_bytes(), "regenerate: python -m fixtures.authoring.unseen"
    assert json.loads(meta.read_text()) == json.loads(META.read_text())
    assert json.loads(META.read_text())["sha256"] == hashlib.sha256(SPLIT.read_bytes()).hexdigest()


def test_the_tables_are_not_the_public_suite_s() -> None:
    public = {(d.file, d.collection) for d in public_suite.DATASETS}
    for dataset in unseen_suite.DATASETS:
        assert all(dataset.file != f and dataset.collection != c for f, c in public), dataset.name


def test_every_line_names_its_collection_and_kinds_follow_the_plan() -> None:
    lines = [json.loads(line) for line in SPLIT.read_text(encoding="utf-8").splitlines()]
    collections = {d.name: d.collection for d in unseen_suite.DATASETS}
    assert len({line["id"] for line in lines}) == len(lines)
    for line in lines:
        assert line["collections"] == [collections[line["dataset"]]]
        assert (line["answer"] is None) == (line["kind"] == "unanswerable"), line["id"]
    kinds = Counter((line["dataset"], line["kind"]) for line in lines)
    for name, plan in unseen_questions.PLAN.items():
        assert tuple(kinds[(name, kind)] for kind in unseen_questions.KINDS) == plan, name
