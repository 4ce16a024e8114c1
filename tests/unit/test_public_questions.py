"""The public split: the committed file is what its author module writes now, and it covers every dataset."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

import pytest

from fixtures.authoring import public as public_questions
from fixtures.public_suite import DATASETS, data_hash

SPLITS = public_questions.SPLITS
SPLIT, META = SPLITS / "public.jsonl", SPLITS / "public.meta.json"


@pytest.fixture(scope="module")
def lines() -> list[dict]:
    return [json.loads(line) for line in SPLIT.read_text(encoding="utf-8").splitlines()]


def test_committed_split_is_what_the_author_writes(tmp_path: Path) -> None:
    split, meta = public_questions.write(tmp_path)
    assert split.read_bytes() == SPLIT.read_bytes(), "regenerate: python -m fixtures.authoring.public"
    assert json.loads(meta.read_text()) == json.loads(META.read_text())


def test_meta_matches_the_file(lines: list[dict]) -> None:
    meta = json.loads(META.read_text())
    assert meta["version"] == 1
    assert meta["records"] == len(lines)
    assert meta["sha256"] == hashlib.sha256(SPLIT.read_bytes()).hexdigest()
    assert meta["composed_by"] == "python -m fixtures.authoring.public"
    assert meta["datasets"] == {d.name: data_hash(d.rows()) for d in DATASETS}


def test_ids_unique_and_counts(lines: list[dict]) -> None:
    assert len(lines) >= 150
    assert len({line["id"] for line in lines}) == len(lines)
    per = Counter(line["dataset"] for line in lines)
    kinds = Counter((line["dataset"], line["kind"]) for line in lines)
    for dataset in DATASETS:
        assert per[dataset.name] >= 30, dataset.name
        assert kinds[(dataset.name, "unanswerable")] >= 5, dataset.name
        assert kinds[(dataset.name, "multi")] >= 7, dataset.name


def test_every_line_is_well_formed(lines: list[dict]) -> None:
    hashes = json.loads(META.read_text())["datasets"]
    collections = {d.name: d.collection for d in DATASETS}
    for line in lines:
        assert line["collections"] == [collections[line["dataset"]]]
        assert line["data"] == hashes[line["dataset"]]
        assert line["kind"] in public_questions.KINDS
        assert line["forms"] and set(line["forms"]) <= public_questions.FORMS
        assert set(line["needs"]) <= public_questions.NEEDS
        if line["kind"] == "unanswerable":
            assert line["answer"] is None and line["lacks"], line["id"]
            continue
        answer = line["answer"]
        assert not line["lacks"], line["id"]
        assert answer and (answer["numbers"] or answer["names"] or answer["groups"]), line["id"]
        for number in [*answer["numbers"], *answer["groups"].values()]:
            assert isinstance(number["value"], float) and isinstance(number["fraction"], bool)
            assert not number["fraction"] or 0 <= number["value"] <= 1
        assert not set(answer["names"]) & set(answer["other_names"]), line["id"]
        assert not set(answer["groups"]) & set(answer["other_groups"]), line["id"]
