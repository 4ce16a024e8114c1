"""Answers built to be wrong, graded like a model's: the final-answer score must give them nothing.

For each question with an answer key, the gold results (executed on the live data by the same
cache that scores runs) yield these probes:

- `nothing`: an empty answer;
- `first_call_only` (multi-step): the first gold call's result as the tool returned it, what a
  run that stops after one query has to go on;
- `first_picks_only` (multi-step): the values the first call revealed, and no more;
- `every_value`: the key's numbers beside every value the named property takes;
- `swapped_groups`: the right group values given to the wrong groups;
- `says_cannot`: an abstention, what a model that refuses everything says (it must not pass as an
  answer, or the abstention questions could be gamed);
- hedges of the gold answer, each value of the key written so that it is not committed to:
  `either_or` ("either X or Y or Z"), `possible_values` ("possible values: Y, X, Z"), `negated`
  ("not X; it is Y"), `guess_after_failure` ("I could not compute it; maybe X?"), `fewer_than`
  and `at_least` (bounds), `between` (a range), and `every_number` (the key's numbers among every
  number the gold results hold).

The gold answer (`AnswerKey.text`) must pass, and each probe must fail on every question it
applies to; `answer_probe_rates` returns the pass rate of each. `citation_probe_rates` does the same
for citation precision.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence

from agent.citations import check_citations
from evaluation.answers import AnswerKey, KeyNumber, grade, matches, numbers_in
from evaluation.ground_truth import Gold, GroundTruthCache
from evaluation.records import EvalRecord
from executors import SHORT_ID_CHARS, ExecutorError, QueryResult, short_id
from executors.results import LLM_MAX_OBJECTS, number_text

#: The abstention probe's answer, on every answerable question.
SAYS_CANNOT = "The database cannot answer this: it has no property for what the question asks."


def _value(value: KeyNumber) -> str:
    return number_text(round(value.value, 4))


def _wrong(value: KeyNumber, step: int) -> str:
    """A value near the key's that no precision reads as it ("4.456" and "5.456" beside 3.456)."""
    return number_text(round(value.value + step * max(1.0, abs(value.value) / 2), 4))


def _written(key: AnswerKey, number: Callable[[KeyNumber], str], name: Callable[[str], str] | None) -> str:
    """The key's answer with every number (and, given `name`, every name) written by the functions."""
    parts = [", ".join(name(n) if name else n for n in key.names)] if key.names else []
    parts += [number(n) for n in key.numbers]
    parts += [f"{group}: {number(value)}" for group, value in key.groups.items()]
    return "; ".join(parts)


def hedges_of(key: AnswerKey, results: Sequence[QueryResult]) -> dict[str, str]:
    """The gold answer hedged every way the grader must refuse (name -> answer text). A probe that
    cannot hedge any part of this key (names only, and no other value to offer) is left out."""
    others = key.other_names[:2]
    numeric = bool(key.numbers or key.groups)
    hedgeable = numeric or bool(others)
    answers: dict[str, str] = {}
    if hedgeable:

        def either(name: str) -> str:
            return f"either {name} or {' or '.join(others)}" if others else name

        def possible(name: str) -> str:
            return f"one of {', '.join([others[0], name, *others[1:]])}" if others else name

        def negated(name: str) -> str:
            return f"not {name} but {others[0]}" if others else name

        answers["either_or"] = _written(
            key, lambda v: f"either {_value(v)} or {_wrong(v, 1)} or {_wrong(v, 2)}", either
        )
        answers["possible_values"] = "Possible values: " + _written(
            key, lambda v: f"{_wrong(v, 1)}, {_value(v)}, {_wrong(v, 2)}", possible
        )
        answers["negated"] = _written(key, lambda v: f"not {_value(v)}; it is {_wrong(v, 1)}", negated)
    answers["guess_after_failure"] = f"I could not compute it; maybe {key.text()}?"
    if numeric:
        answers["fewer_than"] = _written(key, lambda v: f"fewer than {_value(v)}", None)
        answers["at_least"] = _written(key, lambda v: f"at least {_value(v)}", None)
        answers["between"] = _written(key, lambda v: f"between {_value(v)} and {_wrong(v, 1)}", None)
    if key.numbers:
        at_hand = [n for result in results for n in numbers_in(result.to_llm_text())]
        extra = [n.value for n in at_hand if not any(matches(n, k) for k in key.numbers)]
        if extra:
            listed = [number_text(round(v, 4)) for v in sorted({*extra, *(k.value for k in key.numbers)})]
            named = f"{', '.join(key.names)}; " if key.names else ""
            answers["every_number"] = f"{named}the numbers at hand: {', '.join(listed)}."
    return answers


def probes_of(record: EvalRecord, gold: Gold) -> dict[str, str]:
    """The probe answers that apply to one question (name -> answer text)."""
    key = gold.key
    answers = {"gold": key.text(), "nothing": "", "says_cannot": SAYS_CANNOT, **hedges_of(key, gold.results)}
    if record.chain and len(gold.results) > 1:
        answers["first_call_only"] = gold.results[0].to_llm_text()
        first = [str(gold.values[p.name]) for p in record.chain[0].picks if p.name in gold.values]
        answers["first_picks_only"] = ", ".join(first)
    if key.names and key.other_names:
        numbers = ", ".join(number_text(round(n.value, 4)) for n in key.numbers)
        answers["every_value"] = f"{', '.join([*key.other_names, *key.names])}; {numbers}".strip("; ")
    if len({n.value for n in key.groups.values()}) > 1:
        names, values = list(key.groups), list(key.groups.values())
        rotated = dict(zip(names, values[1:] + values[:1], strict=True))
        answers["swapped_groups"] = AnswerKey(groups=rotated).text()
    return answers


def answer_probe_rates(records: Iterable[EvalRecord], truths: GroundTruthCache) -> dict[str, dict[str, float | int]]:
    """Per probe: on how many keyed questions it applies, and the share of them graded right."""
    tallies: dict[str, list[bool]] = {}
    for record in records:
        gold = truths.gold(record)
        if isinstance(gold, ExecutorError) or not gold.key.scored:
            continue
        for name, answer in probes_of(record, gold).items():
            tallies.setdefault(name, []).append(bool(grade(answer, gold.key, record.query).correct))
    return {
        name: {"questions": len(results), "right": round(sum(results) / len(results), 6)}
        for name, results in sorted(tallies.items())
    }


#: Citation probes that cite what the run received: their precision must be 1.
CITING_RECEIVED = ("gold", "full_uuids")


def citation_probe_rates(records: Sequence[EvalRecord], truths: GroundTruthCache) -> dict[str, dict[str, float | int]]:
    """Citation precision of answers built to cite right and wrong, on every question whose gold results
    list objects: the ids the tool showed (`gold`) and the same as full UUIDs must score 1; ids that
    were never shown (`invented`) and real objects another question's results listed (`other_question`)
    must score 0. Mean precision per probe, over the questions it applies to."""
    shown: list[tuple[EvalRecord, list[str]]] = []
    for record in records:
        gold = truths.gold(record)
        if isinstance(gold, ExecutorError):
            continue
        uuids = [o.uuid for result in gold.results for o in result.objects[:LLM_MAX_OBJECTS]]
        if uuids:
            shown.append((record, uuids))
    tallies: dict[str, list[float]] = {}
    for index, (record, uuids) in enumerate(shown):
        received = {u.lower() for u in uuids}
        others = [u for _, theirs in shown[index + 1 :] + shown[:index] for u in theirs if u.lower() not in received]
        digest = hashlib.sha256(record.id.encode()).hexdigest()
        answers = {
            "gold": " ".join(f"[{short_id(u)}]" for u in uuids),
            "full_uuids": " ".join(uuids),
            "invented": " ".join(f"[{digest[i : i + SHORT_ID_CHARS]}]" for i in range(0, 3 * SHORT_ID_CHARS, 8)),
            "other_question": " ".join(f"[{short_id(u)}]" for u in others[:3]),
        }
        for name, answer in answers.items():
            precision = check_citations(answer, received).precision
            if precision is not None:
                tallies.setdefault(name, []).append(precision)
    return {
        name: {"questions": len(values), "precision": round(sum(values) / len(values), 6)}
        for name, values in sorted(tallies.items())
    }
