"""`dbgorilla compose-split --collections A,B`: a benchmark of a user's own collections, read-only.

Each collection's stored objects are read once (`stored_rows`), questions are composed from its schema and
rows (`fixtures.authoring.own`), and each answerable question's gold call is run on the live collection: a
question is kept only where the executed result states the gold answer computed from the rows (two
computations that must agree: the label is verified by execution). Lines are in the public split's
format (`fixtures.datasets.public`), with the collection, the hash of the rows the answers were
computed on, the gold calls and the shape that wrote each question, so `eval --dataset FILE
--collections A,B` scores any model on them (arguments, execution and answers), `audit-dataset FILE`
audits them, and both refuse them once the data has changed.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agent.answer import FinalAnswer
from agent.strategies.grounded import derived_answer
from evaluation.answer_key import AnswerKey
from evaluation.answers import grade_committed
from evaluation.paraphrase import Reword, paraphrase, reason_kind
from executors import ExecutorError, QueryResult, WeaviateExecutor
from executors.schema import CollectionSchema
from fixtures.authoring.own import Composed, compose_questions, words
from fixtures.authoring.public.gold import line_of
from fixtures.datasets.public import PublicQuestion
from fixtures.public_suite import data_hash

#: The most objects a collection may hold to be read whole for composing.
MAX_OBJECTS = 100_000


class OwnSplitError(Exception):
    """A collection cannot be composed over: missing, too large, or no question survived."""


@dataclass
class Composition:
    """The lines composed, and per collection what was kept and what was dropped and why."""

    lines: list[dict[str, Any]] = field(default_factory=list)
    kept: dict[str, int] = field(default_factory=dict)
    dropped: list[str] = field(default_factory=list)
    #: With a model to reword: how many questions it reworded, and why the template stayed for the rest.
    reworded: int = 0
    kept_templates: Counter[str] = field(default_factory=Counter)


def _plain(value: Any) -> Any:
    """A stored value as JSON holds it (dates as their text), for the rows' hash."""
    return value if isinstance(value, str | int | float | bool) or value is None else str(value)


def stored_rows(client: Any, name: str) -> list[dict[str, Any]]:
    """Every object's properties in the collection (read-only; references and missing values left out)."""
    if not client.collections.exists(name):
        raise OwnSplitError(f"no collection named {name} in this Weaviate")
    rows: list[dict[str, Any]] = []
    for obj in client.collections.use(name).iterator():
        if len(rows) >= MAX_OBJECTS:
            raise OwnSplitError(f"{name} holds more than {MAX_OBJECTS} objects; composing reads every object")
        properties = obj.properties or {}
        rows.append({k: v for k, v in properties.items() if v is not None and not isinstance(v, list | dict)})
    return rows


def rows_hash(rows: list[dict[str, Any]]) -> str:
    """What a composed file's answers were computed on (`eval` checks it against the live collection)."""
    return data_hash([{k: _plain(v) for k, v in row.items()} for row in rows])


def executed_answer(read: str, result: QueryResult) -> FinalAnswer | None:
    """What a gold call's result states, read as the question asks (`Composed.read`): how many objects
    matched, how many groups there are, or the one answer its aggregation holds."""
    if read == "count":
        return FinalAnswer(numbers=[float(result.total_count)]) if result.total_count is not None else None
    if read == "groups":
        return None if result.groups is None or result.truncated else FinalAnswer(numbers=[float(len(result.groups))])
    answer = derived_answer(result)
    return None if answer is not None and answer.group_names else answer  # no key holds names per group


def _slug(name: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
    return slug if slug[:1].isalpha() else f"c_{slug}"


#: An embedder: texts -> one vector each (`llm.encoder.MiniLMEncoder.encode`).
Encode = Callable[[list[str]], Any]


def nearness(encode: Encode, collection: CollectionSchema) -> Callable[[str], float]:
    """How close in meaning words are to the collection's nearest property (its name's words and its
    description), as the cosine of their embeddings."""
    texts = [words(p.name) + (f": {p.description}" if p.description else "") for p in collection.properties]
    known = [_unit(v) for v in encode(texts)] if texts else []

    def near(text: str) -> float:
        asked = _unit(encode([text])[0])
        return max((sum(a * b for a, b in zip(asked, v, strict=True)) for v in known), default=0.0)

    return near


def _unit(vector: Any) -> list[float]:
    values = [float(x) for x in vector]
    norm = math.sqrt(sum(x * x for x in values)) or 1.0
    return [x / norm for x in values]


def compose_split(
    client: Any,
    executor: WeaviateExecutor,
    collections: list[str],
    per_shape: int = 2,
    seed: int = 42,
    encode: Encode | None = None,
    reword: Reword | None = None,
) -> Composition:
    """The questions over each collection whose gold the live collection confirms, in the public format
    (`encode`: an embedder, for the questions the data cannot answer; `reword`: a model turn that rewords
    each, kept where `evaluation.paraphrase` shows it asks the same thing)."""
    composition = Composition()
    schema = executor.schema
    for name in collections:
        found = schema.get(name)
        if found is None:
            raise OwnSplitError(f"no collection named {name} in this Weaviate")
        rows = stored_rows(client, name)
        digest = rows_hash(rows)
        index = 0
        near = nearness(encode, found) if encode is not None else None
        for composed in compose_questions(found, rows, per_shape, seed, near):
            question = composed.question
            answer = question.gold(rows) if question.gold is not None else None
            if composed.call is not None:
                problem = _disagreement(executor, composed, answer)
                if problem:
                    composition.dropped.append(f"{name}: {question.query} ({problem})")
                    continue
            index += 1
            line = line_of(question, _slug(name), name, index, answer, digest) | {
                "gold_calls": gold_calls(composed),
                "shape": composed.shape,
            }
            if reword is not None:
                _reword(line, reword, [p.name for p in found.properties], composition)
            PublicQuestion.model_validate(line)  # the file eval reads
            composition.lines.append(line)
        composition.kept[name] = index
    if not composition.lines:
        raise OwnSplitError(f"no question could be composed over {', '.join(collections)}")
    return composition


def _reword(line: dict[str, Any], reword: Reword, properties: list[str], composition: Composition) -> None:
    """The line's question reworded where the check keeps the rewording; the template stays beside it."""
    calls = [gold["call"] for gold in line["gold_calls"]]
    lacking = [re.sub(r"s$", "", line["lacks"])] if line["lacks"] else []
    text, why = paraphrase(line["query"], calls, reword, properties, lacking)
    if text is None:
        composition.kept_templates[reason_kind(why)] += 1
        return
    composition.reworded += 1
    line.update(template=line["query"], query=text, forms=[*line["forms"], "paraphrase"])


def gold_calls(composed: Composed) -> list[dict[str, Any]]:
    """A composed question's gold calls as a line holds them: its earlier steps', then its own."""
    if composed.call is None:
        return []
    steps = [(call, read) for call, read, _ in composed.steps] + [(composed.call, composed.read)]
    return [{"call": call, "read": read} for call, read in steps]


def _disagreement(executor: WeaviateExecutor, composed: Composed, answer: dict[str, Any] | None) -> str:
    """Why an executed gold call does not state what it should ("" when each does): a two-part question's
    first step its pick, its last call the answer's number."""
    assert composed.call is not None and answer is not None
    last = {**answer, "names": [], "other_names": []} if composed.steps else answer
    for call, read, stated_key in [*composed.steps, (composed.call, composed.read, last)]:
        try:
            result = executor.execute(call)
        except ExecutorError as error:
            return f"the gold call failed: {error}"
        stated = executed_answer(read, result)
        if stated is None:
            return "the executed result states no one answer"
        verdict = grade_committed(stated, AnswerKey.model_validate(stated_key))
        if not verdict.correct:
            return f"executed: {verdict.reason}"
    return ""


def render(lines: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
