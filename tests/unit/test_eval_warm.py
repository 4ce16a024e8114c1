"""`dbgorilla eval` warms the local model before its questions: each use case's openings once, in the order its
first question comes, each for one token, so no question pays a system turn inside its own latency; a model
failing while warming is said, and the questions still run."""

from __future__ import annotations

from typing import Any

import pytest
from typer.testing import CliRunner

from agent import AgentConfig, ToolDesign, build_tools
from agent.session import AgentSession
from agent.strategies import DEFAULT_STRATEGY
from agent.tokens import estimate_counter
from dbgorilla.cli import app, eval_progress
from evaluation import runner
from evaluation.orchestration import Driver, oracle_driver
from executors import ReferenceExecutor
from fixtures.datasets import AbstentionCase
from llm import ChatRequest, ModelError, ModelReply, Usage
from tests.unit.test_openings import NAME, Recording, Shelf, schema


class Counting(Recording):
    """Answers each warming with one token and counts what it was sent; fails after `fail_after` requests."""

    def __init__(self, fail_after: int | None = None) -> None:
        super().__init__()
        self.fail_after = fail_after

    def complete(self, request: ChatRequest) -> ModelReply:
        if self.fail_after is not None and len(self.requests) >= self.fail_after:
            raise ModelError("the local server went away")
        self.requests.append(request)
        return ModelReply(content="x", usage=Usage(prompt_tokens=100, cached_tokens=40))


def _case(number: int, use_case: str) -> AbstentionCase:
    return AbstentionCase(
        id=f"{use_case.replace('-', '_')}-{number:03d}", version=1, use_case=use_case, query="How many seats?", collection=NAME,
        reason="unknown_property", missing_property="seats",
    )  # fmt: skip


def _context(model: Any, use_cases: tuple[str, ...] = ("first", "second")) -> runner.RunContext:
    data = ReferenceExecutor(schema(), {NAME: [], "Other": []})
    tools = build_tools(schema(), counter=estimate_counter())
    return runner.RunContext(
        client=None,
        executor=data,  # type: ignore[arg-type]
        scoring=data,  # type: ignore[arg-type]
        tools_for=dict.fromkeys(use_cases, tools),
        model_for=lambda _case: model,
        model_name="counting",
        config=AgentConfig(),
        design=ToolDesign(),
        strategy=DEFAULT_STRATEGY,
        retriever_for=lambda _use_case: Shelf(),
        warm=True,
    )


def test_each_use_case_opens_once_in_the_order_of_its_first_question() -> None:
    model = Counting()
    context = _context(model)
    cases = [_case(1, "second"), _case(2, "first"), _case(3, "second"), _case(4, "not-loaded")]
    openings = runner.openings_of(cases, context)  # type: ignore[arg-type]
    one = AgentSession(context.executor, context.tools_for["first"], model, DEFAULT_STRATEGY, AgentConfig(), Shelf())
    expected = one.openings()
    assert len(expected) >= 3  # the check's listing, then per collection a verdict and a tool turn
    assert [request for _, request in openings] == expected + expected
    assert all(sent is model for sent, _ in openings)


def test_warming_sends_each_opening_for_one_token_and_says_what_it_evaluated(
    capsys: pytest.CaptureFixture[str],
) -> None:
    model = Counting()
    context = _context(model)
    warmed = eval_progress.warm_with_progress([_case(1, "first"), _case(2, "second")], context)
    openings = runner.openings_of([_case(1, "first"), _case(2, "second")], context)  # type: ignore[arg-type]
    assert len(warmed) == len(openings) == len(model.requests)
    assert [r.max_tokens for r in model.requests] == [1] * len(openings)
    assert [r.model_copy(update={"max_tokens": None}) for r in model.requests] == [o for _, o in openings]
    said = capsys.readouterr().err
    assert "of 2 use cases" in said and f"{len(openings) * 60:,} of {len(openings) * 100:,} prompt tokens" in said


def test_a_model_failing_while_warming_is_said_and_the_cases_still_run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    model = Counting(fail_after=2)
    context = _context(model, ("first",))
    ran: list[Any] = []
    monkeypatch.setattr(runner, "run_cases", lambda todo, *_a, **_k: ran.append(todo))
    todo = [_case(1, "first")]
    eval_progress.run_with_progress(todo, context, None, 1)  # type: ignore[arg-type]
    said = capsys.readouterr().err
    assert "not warmed" in said and "the local server went away" in said and "warm: 2 of" in said
    assert ran == [todo]


def test_a_run_not_asked_to_warm_sends_nothing_first(monkeypatch: pytest.MonkeyPatch) -> None:
    model = Counting()
    context = _context(model)
    context.warm = False
    monkeypatch.setattr(runner, "run_cases", lambda *_a, **_k: None)
    eval_progress.run_with_progress([_case(1, "first")], context, None, 1)  # type: ignore[arg-type]
    assert model.requests == []


def test_a_question_file_warms_each_dataset_once_in_the_order_of_its_first_question(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`eval --dataset public` (a file over your own collections) warms too: each dataset's openings once."""
    from dbgorilla.cli.evaluate_public import _warm
    from fixtures.datasets.public import PublicQuestion

    def asked(number: int, dataset: str, collection: str) -> PublicQuestion:
        return PublicQuestion(id=f"{dataset}-{number:03d}", dataset=dataset, collections=[collection],
                              query="How many seats?", kind="unanswerable", lacks="seats")  # fmt: skip

    model = Counting()
    data = ReferenceExecutor(schema(), {NAME: [], "Other": []})
    questions = [asked(1, "second", "Other"), asked(2, "first", NAME), asked(3, "second", "Other")]
    shelf = Shelf()
    _warm(questions, data, ToolDesign(), model, DEFAULT_STRATEGY, AgentConfig(), lambda _: shelf, None)  # type: ignore[arg-type]
    expected = [
        o
        for collection in ("Other", NAME)
        for o in AgentSession.over(
            data, [collection], ToolDesign(), model, DEFAULT_STRATEGY, AgentConfig(), shelf
        ).openings()
    ]
    assert [r.model_copy(update={"max_tokens": None}) for r in model.requests] == expected
    assert "of 2 datasets" in capsys.readouterr().err


def test_eval_and_ablate_warm_a_local_model_only() -> None:
    """`ablate` times its runs as `eval` does: warmed where eval warms (a local chat model), never an endpoint's
    tokens or the oracle, and not when told `--no-warm`."""
    local = Driver("qwen", lambda _case: None, chat=object())
    assert eval_progress.warms(True, None, None, local)
    assert not eval_progress.warms(False, None, None, local)
    assert not eval_progress.warms(True, "gpt-4o-mini", "https://api.example.com/v1", local)
    assert not eval_progress.warms(True, None, None, oracle_driver())
    for command in ("eval", "ablate"):
        shown = CliRunner().invoke(app, [command, "--help"], terminal_width=200).output
        assert "--no-warm" in shown, command
