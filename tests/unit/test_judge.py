"""The LLM-as-judge ranking with scripted judges: the paper's arithmetic, anonymity, the shuffle, merged
identical predictions, and replies that do not parse (recorded, never raised)."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from agent import ModelError, ModelReply
from evaluation.judge import (
    POINTS,
    JudgeLine,
    judge_question,
    judge_runs,
    label_of,
    points,
    score_runs,
    write_judgement,
)
from evaluation.judge_reply import ChatJudge, ReplyError, parse_reply, reply_schema
from evaluation.records import EvalRecord, Outcome, PredictedCall
from evaluation.report import ReportError, Run
from llm import OpenAIChatModel

Messages = list[dict[str, str]]


def record(id: str, model: str, collection: str = "Courses", answer: str = "", *, ok: bool = True) -> EvalRecord:
    arguments = {"collection_name": collection, "search_query": "databases"}
    call = PredictedCall(
        tool_name="query_database",
        raw_arguments=json.dumps(arguments),
        arguments=arguments,
        ok=ok,
        error_code=None if ok else "unknown_collection",
        error_message=None if ok else f"no collection {collection}",
    )
    return EvalRecord(
        id=id, use_case="courses", query=f"Which courses are about databases? ({id})", complexity="simple",
        components=["search"], ground_truth={"collection_name": "Courses", "search_query": "databases"},
        model=model, tool_design="unified", predicted_calls=[call], final_answer=answer or None, outcome=Outcome.OK,
    )  # fmt: skip


def run(name: str, records: list[EvalRecord]) -> Run:
    return Run(name, Path(f"/runs/{name}"), records, {"model": records[0].model}, {})


def distinct_runs(count: int, questions: int = 1) -> list[Run]:
    """`count` runs whose predictions all differ (each answers in its own words)."""
    return [
        run(f"run-{i}", [record(f"q-{q:02d}", f"model-{i}", answer=f"answer {i}") for q in range(questions)])
        for i in range(count)
    ]


def ranking_reply(ranks: dict[str, int], explanation: str = "because") -> str:
    return json.dumps({"explanation": explanation, "ranking": [{"label": k, "rank": v} for k, v in ranks.items()]})


def labels_in(messages: Messages) -> list[str]:
    head = messages[1]["content"].split("Predictions (")[1].split(")")[0]
    return head.split(", ")


def line(ranks: dict[str, int]) -> JudgeLine:
    return JudgeLine(id="q", use_case="courses", query="?", labels={}, messages=[], ranks=ranks)


# --- the paper's weighted rank score ---------------------------------------------------------------


def test_points_follow_the_paper_and_stop_after_ninth() -> None:
    assert [points(rank) for rank in range(1, 13)] == [100, 70, 50, 35, 25, 20, 15, 10, 5, 0, 0, 0]
    assert POINTS[0] == 100 and len(POINTS) == 9


def test_weighted_score_sums_points_with_ties_and_more_than_ten_runs() -> None:
    runs = distinct_runs(12)
    names = [r.name for r in runs]
    # Question 1: ranks 1..12 in order. Question 2: run-0 and run-1 tie first, run-2 third, the rest 12th.
    first = dict(zip(names, range(1, 13), strict=True))
    second = {name: 12 for name in names} | {"run-0": 1, "run-1": 1, "run-2": 3}
    unjudged = line({}).model_copy(update={"ranks": None, "error": "x", "error_kind": "parse"})
    scores = {s.run: s for s in score_runs([line(first), line(second), unjudged], runs)}
    assert scores["run-0"].weighted_score == 200 and scores["run-0"].ranked_first == 2
    assert scores["run-1"].weighted_score == 70 + 100 and scores["run-1"].ranked_first == 1
    assert scores["run-2"].weighted_score == 50 + 50
    assert scores["run-8"].weighted_score == 5  # 9th, then 12th
    assert scores["run-9"].weighted_score == 0 and scores["run-11"].weighted_score == 0  # 10th and 12th: nothing
    assert scores["run-0"].mean_score == 100.0 and scores["run-1"].mean_score == 85.0
    assert scores["run-1"].ranked_first_share == 0.5
    assert all(s.judged == 2 and s.errors == 1 for s in scores.values())
    ordered = score_runs([line(first), line(second)], runs)
    assert [s.run for s in ordered[:3]] == ["run-0", "run-1", "run-2"]


def test_labels_go_past_z() -> None:
    assert [label_of(i) for i in (0, 1, 25, 26, 27, 51, 52)] == ["A", "B", "Z", "AA", "AB", "AZ", "BA"]


# --- what the judge sees ---------------------------------------------------------------------------


def test_the_prompt_names_no_model_and_no_run() -> None:
    runs = [
        run("alpha-run-dir", [record("q-1", "secret-model-gpt", answer="Databases 101.")]),
        run("beta-run-dir", [record("q-1", "other-model-llama", collection="Instructors", ok=False)]),
    ]
    seen: list[Messages] = []

    def judge(messages: Messages, schema: dict[str, Any] | None) -> str:
        seen.append(messages)
        assert schema is not None and schema["properties"]["ranking"]["minItems"] == 2
        return ranking_reply({"A": 1, "B": 2})

    judged = judge_runs(runs, judge, "judge-x")
    text = json.dumps(seen)
    for secret in ("secret-model-gpt", "other-model-llama", "alpha-run-dir", "beta-run-dir", "alpha", "beta"):
        assert secret not in text
    prompt = seen[0][1]["content"]
    assert "Question: Which courses are about databases? (q-1)" in prompt
    assert "Courses" in prompt and "isOnline" in prompt  # the use case's collections and properties
    assert (
        "failed (unknown_collection: no collection Instructors)" in prompt and "final answer: Databases 101." in prompt
    )
    assert judged.lines[0].labels.keys() == {"A", "B"}


def test_the_order_is_shuffled_per_question_and_fixed_by_the_seed() -> None:
    runs = distinct_runs(4, questions=12)

    def shown(seed: int) -> list[list[list[str]]]:
        judgement = judge_runs(runs, lambda m, s: ranking_reply(dict.fromkeys(labels_in(m), 1)), "j", seed=seed)
        return [list(line.labels.values()) for line in judgement.lines]

    assert shown(7) == shown(7)
    assert shown(7) != shown(8)
    assert len({json.dumps(order) for order in shown(7)}) > 1, "the order changes from question to question"


def test_identical_predictions_are_shown_once_and_share_their_rank() -> None:
    same = [run(f"same-{i}", [record("q-1", f"m{i}", answer="Databases 101.")]) for i in range(3)]
    other = run("other", [record("q-1", "m9", collection="Instructors", answer="None.", ok=False)])
    sent: list[Messages] = []

    def judge(messages: Messages, schema: dict[str, Any] | None) -> str:
        sent.append(messages)
        labels = labels_in(messages)
        assert len(labels) == 2 and messages[1]["content"].count("Prediction ") == 2
        merged = re.findall(r"Prediction (\w+)\n- call 1, ran", messages[1]["content"])
        assert len(merged) == 1, "the three identical predictions are one"
        return ranking_reply({label: 1 if label in merged else 2 for label in labels})

    judgement = judge_runs([*same, other], judge, "j")
    ranks = judgement.lines[0].ranks
    assert ranks == {"same-0": 1, "same-1": 1, "same-2": 1, "other": 2}
    assert sorted(len(runs) for runs in judgement.lines[0].labels.values()) == [1, 3]
    assert judgement.summary.unique_predictions_mean == 2.0
    scores = {s.run: s.weighted_score for s in judgement.summary.runs}
    assert scores == {"same-0": 100, "same-1": 100, "same-2": 100, "other": 70}


def test_all_identical_needs_no_request() -> None:
    runs = [run(f"r{i}", [record("q-1", f"m{i}", answer="same")]) for i in range(2)]

    def judge(messages: Messages, schema: dict[str, Any] | None) -> str:
        raise AssertionError("nothing to rank")

    judgement = judge_runs(runs, judge, "j")
    assert judgement.lines[0].ranks == {"r0": 1, "r1": 1} and judgement.summary.all_identical == 1


# --- replies that do not parse ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        ("I would rank A first.", "holds no JSON object"),
        ('{"explanation": "x", "ranking": [{"label": "A", "rank": 1}]}', "labels not ranked: B"),
        ('{"ranking": [{"label": "A", "rank": 1}, {"label": "A", "rank": 2}]}', "ranked twice"),
        ('{"ranking": [{"label": "A", "rank": 0}, {"label": "B", "rank": 1}]}', "rank 0"),
        ('{"ranking": [{"label": "A", "rank": "1"}, {"label": "B", "rank": 2}]}', "rank '1'"),
        ('{"ranking": [{"label": "A", "rank": 1}, {"label": "C", "rank": 2}]}', "unknown label 'C'"),
        ('{"explanation": "no ranking"}', "no `ranking` list"),
        ('{"explanation": "cut off", "ranking": [{"label": "A", "ra', "holds no JSON object"),
    ],
)
def test_a_bad_reply_is_recorded_not_raised(reply: str, error: str) -> None:
    with pytest.raises(ReplyError, match=error.replace("(", r"\(")):
        parse_reply(reply, ["A", "B"])
    judgement = judge_runs(distinct_runs(2), lambda m, s: reply, "j")
    failed = judgement.lines[0]
    assert failed.error_kind == "parse" and error in (failed.error or "")
    assert failed.reply == reply and failed.messages and failed.ranks is None
    assert judgement.summary.parse_errors == 1 and judgement.summary.judged == 0
    assert all(s.weighted_score == 0 and s.errors == 1 and s.mean_score is None for s in judgement.summary.runs)


def test_fenced_json_and_prose_around_it_are_accepted() -> None:
    fenced = 'Here is my ranking:\n```json\n{"explanation": "B misses the filter", "ranking": [{"label": "B", "rank": 2}, {"label": "A", "rank": 1}]}\n```'
    assert parse_reply(fenced, ["A", "B"]) == ({"B": 2, "A": 1}, "B misses the filter")
    assert parse_reply('Sure! {"ranking": {"A": 1, "B": 1}} Hope it helps.', ["A", "B"]) == ({"A": 1, "B": 1}, None)


def test_an_endpoint_failure_is_recorded_with_its_type() -> None:
    def judge(messages: Messages, schema: dict[str, Any] | None) -> str:
        raise TimeoutError("no answer in 300 s")

    judgement = judge_runs(distinct_runs(2, questions=2), judge, "j")
    assert [line.error for line in judgement.lines] == ["TimeoutError: no answer in 300 s"] * 2
    assert judgement.summary.endpoint_errors == 2 and judgement.summary.questions == 2


def test_the_schema_lists_the_labels() -> None:
    schema = reply_schema(["A", "B", "C"])
    entry = schema["properties"]["ranking"]["items"]["properties"]
    assert entry["label"]["enum"] == ["A", "B", "C"] and entry["rank"]["maximum"] == 3


# --- selection, output ------------------------------------------------------------------------------


def test_only_questions_every_run_answered_are_judged(tmp_path: Path) -> None:
    a = run("a", [record("q-1", "m1", answer="x"), record("q-2", "m1", answer="x"), record("q-3", "m1")])
    b = run("b", [record("q-2", "m2", answer="y"), record("q-3", "m2", answer="y")])
    judge = lambda m, s: ranking_reply({"A": 1, "B": 2})  # noqa: E731
    assert [line.id for line in judge_runs([a, b], judge, "j").lines] == ["q-2", "q-3"]
    assert [line.id for line in judge_runs([a, b], judge, "j", limit=1).lines] == ["q-2"]
    assert [line.id for line in judge_runs([a, b], judge, "j", ids=["q-3"]).lines] == ["q-3"]
    with pytest.raises(ReportError, match="q-1"):
        judge_runs([a, b], judge, "j", ids=["q-1"])
    with pytest.raises(ReportError, match="at least two runs"):
        judge_runs([a], judge, "j")
    files = write_judgement(judge_runs([a, b], judge, "j", seed=3), tmp_path)
    lines = [JudgeLine.model_validate_json(text) for text in files[0].read_text().splitlines()]
    summary = json.loads(files[1].read_text())
    assert len(lines) == 2 and summary["seed"] == 3 and summary["prompt_version"] and summary["judge_model"] == "j"


# --- gameability ------------------------------------------------------------------------------------


def test_a_judge_that_always_prefers_a_favours_no_run() -> None:
    """Position bias (always rank the first label best) must spread over the runs, not crown one."""
    runs = distinct_runs(3, questions=40)

    def lazy(messages: Messages, schema: dict[str, Any] | None) -> str:
        return ranking_reply({label: 1 if label == "A" else 2 for label in labels_in(messages)})

    judgement = judge_runs(runs, lazy, "lazy", seed=0)
    firsts = Counter(run for line in judgement.lines for run in line.labels["A"])
    assert set(firsts) == {"run-0", "run-1", "run-2"}
    assert all(count >= 6 for count in firsts.values()), firsts  # 40/3 expected each
    shares = [s.ranked_first_share or 0 for s in judgement.summary.runs]
    assert max(shares) < 0.6
    assert judgement.summary.first_label_ranked_first == 40  # the bias is reported, beside chance
    assert judgement.summary.first_label_expected == pytest.approx(40 / 3, abs=0.01)


def test_a_judge_blind_to_position_ranks_the_first_label_first_by_chance() -> None:
    runs = distinct_runs(2, questions=40)

    def by_run(messages: Messages, schema: dict[str, Any] | None) -> str:  # prefers run-0's answer wherever shown
        body = messages[1]["content"].split("Predictions (")[1]
        first = "A" if body.index("answer 0") < body.index("answer 1") else "B"
        return ranking_reply({label: 1 if label == first else 2 for label in labels_in(messages)})

    summary = judge_runs(runs, by_run, "fair", seed=0).summary
    assert summary.runs[0].run == "run-0" and summary.runs[0].ranked_first == 40
    assert 10 <= summary.first_label_ranked_first <= 30  # the shuffle put run-0 first about half the time
    assert summary.first_label_expected == 20


def test_judge_question_shows_every_call_in_order() -> None:
    first = record("q-1", "m", answer="done")
    second_call = first.predicted_calls[0].model_copy(
        update={
            "arguments": None,
            "raw_arguments": '{"collection_name": "Cour',
            "ok": False,
            "error_code": "invalid_arguments",
            "error_message": "bad JSON",
        }
    )
    first = first.model_copy(update={"predicted_calls": [*first.predicted_calls, second_call]})
    line = judge_question(
        [("x", first), ("y", record("q-1", "n"))], "Courses", lambda m, s: ranking_reply({"A": 1, "B": 2}), 0
    )
    prompt = line.messages[1]["content"]
    assert prompt.index("call 1, ran") < prompt.index(
        'call 2, failed (invalid_arguments: bad JSON): {"collection_name": "Cour'
    )
    assert "no final answer" in prompt


# --- asking an endpoint -----------------------------------------------------------------------------


class StatusError(Exception):
    """What the openai client raises for an error status: it carries `status_code`."""

    def __init__(self, status_code: int) -> None:
        super().__init__(f"HTTP {status_code}")
        self.status_code = status_code


class ScriptedEndpoint(OpenAIChatModel):
    """An OpenAI-compatible model whose endpoint refuses some response formats, as real endpoints do."""

    def __init__(self, refuses: dict[str | None, Exception]) -> None:
        super().__init__("scripted")
        self.refuses = refuses
        self.asked: list[str | None] = []

    def _create(self, body: dict[str, Any]) -> ModelReply:
        kind = body["response_format"]["type"] if "response_format" in body else None
        self.asked.append(kind)
        if kind in self.refuses:
            error = self.refuses[kind]
            raise ModelError(str(error)) from error
        return ModelReply(content=ranking_reply({"A": 1, "B": 2}))


def test_chat_judge_falls_back_to_the_form_the_endpoint_takes_and_keeps_it() -> None:
    endpoint = ScriptedEndpoint({"json_schema": StatusError(500)})  # llama-cpp-python's validation error
    judge = ChatJudge(endpoint)
    judgement = judge_runs(distinct_runs(2, questions=3), judge, "scripted")
    assert judgement.summary.judged == 3
    assert endpoint.asked == ["json_schema", "json_object", "json_object", "json_object"]
    assert judge.response_format == "json_object"


def test_chat_judge_raises_what_no_form_fixes() -> None:
    refusing = ScriptedEndpoint(
        {"json_schema": StatusError(400), "json_object": StatusError(400), None: StatusError(400)}
    )
    judgement = judge_runs(distinct_runs(2, questions=2), ChatJudge(refusing), "scripted")
    assert refusing.asked == ["json_schema", "json_object", None] * 2, "a form is dropped only once another worked"
    assert judgement.lines[0].error == "ModelError: HTTP 400" and judgement.summary.endpoint_errors == 2
    timing_out = ScriptedEndpoint({"json_schema": TimeoutError("no answer")})
    judge_runs(distinct_runs(2), ChatJudge(timing_out), "scripted")
    assert timing_out.asked == ["json_schema"], "no status: the endpoint did not answer, another form would not help"


def test_the_judge_sees_the_committed_answer_and_two_commits_are_two_predictions() -> None:
    from agent.answer import Commit, FinalAnswer

    def committed(value: float) -> EvalRecord:
        base = record("q-1", "m", answer="About 3.5.")
        return base.model_copy(update={"commit": Commit(answer=FinalAnswer(numbers=[value]))})

    line = judge_question(
        [("x", committed(3.46)), ("y", committed(4.1))], "Courses", lambda m, s: ranking_reply({"A": 1, "B": 2}), 0
    )
    prompt = line.messages[1]["content"]
    assert "- committed answer: 3.46" in prompt and "- committed answer: 4.1" in prompt
    assert len(line.labels) == 2  # the same prose, different commitments: not merged
