"""`onestep`: a strategy added in one module, found by the registry and offered by name; one model turn per
question, so a call the executor refuses is not written again."""

from __future__ import annotations

from agent import AgentConfig
from agent.strategies import STRATEGIES, build_strategy, canonical
from agent.strategies.onestep import OneStep
from agent.testing import FunctionModel
from tests.unit.test_strategies import MEAN_PRICE, NAME, QUESTION, executor, mean_model, tools

#: A property the collection does not have: the executor refuses the call, and the loop sends it back.
WRONG = {"collection_name": NAME, "integer_property_aggregation": {"property_name": "cost", "metrics": "MEAN"}}


def _tool_turns(model: FunctionModel) -> int:
    return sum(1 for call in model.calls if call["response_format"] is None)


def test_onestep_is_registered_from_its_own_module_and_composes_innermost() -> None:
    assert STRATEGIES["onestep"].summary.startswith("one model turn")
    assert canonical("onestep+grounded") == "grounded+onestep"
    assert isinstance(build_strategy("onestep").strategy, OneStep)
    ranks = [info.rank for info in STRATEGIES.values()]
    assert ranks == sorted(set(ranks)), "each strategy has its own place in a composition"


def test_a_refused_call_is_written_again_by_react_and_not_by_onestep() -> None:
    again = mean_model(calls=(WRONG, MEAN_PRICE))
    corrected = build_strategy("react").run(again, executor(), tools(), AgentConfig(), QUESTION)
    assert [c.ok for c in corrected.calls()] == [False, True]
    assert corrected.answer is not None and corrected.answer.numbers == [5.0]

    once = mean_model(calls=(WRONG, MEAN_PRICE))
    run = build_strategy("onestep").run(once, executor(), tools(), AgentConfig(), QUESTION)
    assert [c.ok for c in run.calls()] == [False]
    assert _tool_turns(once) == 1
    assert run.outcome == "max_steps" and run.strategy == "onestep"
    assert run.strategy_notes["onestep"] == {"max_steps": 1}
