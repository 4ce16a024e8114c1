"""The loop with no server at all: `FunctionModel` scripts the model, `ReferenceExecutor` answers.

The same behaviours the integration tier checks over HTTP and a live Weaviate, here in
milliseconds: text calls recovered, corrections after typed errors, the correction limit,
unknown tools, bad JSON, model errors and timeouts, and the oracle replaying a label.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent import (
    Agent,
    AgentConfig,
    ModelError,
    ModelReply,
    ModelTimeout,
    OracleModel,
    ToolDesign,
    ToolVariant,
    build_tools,
)
from agent.answer import COMMIT_PROMPT, FinalAnswer, is_commit_request
from agent.models import Usage
from agent.testing import FunctionModel, tool_reply
from agent.tokens import estimate_counter
from agent.tooldef import tool_function_name
from executors import DatabaseSchema, QueryDatabaseArguments, ReferenceExecutor
from executors.results import LLM_MAX_OBJECTS
from executors.testing import sample_objects, sample_schema
from llm import ModelMessage, ModelRequest, ModelResponse, ToolDefinition
from llm.messages import tool_returns

NAME = "Offline"
SCHEMA = sample_schema(NAME)
OBJECTS = sample_objects(40, seed=3)
OPEN_LATE = {
    "collection_name": NAME,
    "boolean_property_filter": {"property_name": "open_late", "operator": "=", "value": True},
}
Script = list[ModelReply | Exception]


def scripted(replies: Script) -> FunctionModel:
    """A model that answers with `replies` in order (an exception is raised instead of answered)."""
    queue = list(replies)

    def reply(messages: list[ModelMessage], tools: list[ToolDefinition] | None) -> ModelReply:
        if not queue:  # the commit turn of a script that ends with the prose answer
            raise ModelError("the script has no reply left")
        item = queue.pop(0)
        if isinstance(item, Exception):
            raise item
        return item

    return FunctionModel(reply)


def run(model: FunctionModel | OracleModel, question: str = "Which places are open late?", **config: Any) -> Any:
    executor = ReferenceExecutor(SCHEMA, {NAME: OBJECTS})
    tools = build_tools(SCHEMA, counter=estimate_counter())
    return Agent(model, executor, tools, AgentConfig(**config)).run(question)


def open_late_uuids() -> list[str]:
    return sorted(o.uuid for o in OBJECTS if o.properties.get("open_late") is True)


def test_a_call_then_an_answer() -> None:
    result = run(scripted([tool_reply("query_database", OPEN_LATE), ModelReply(content="Several.")]))
    assert result.outcome == "answered" and result.final_answer == "Several."
    [call] = result.calls()
    assert call.ok and call.result is not None
    expected = open_late_uuids()
    assert len(expected) > 10, "the sample must have more matches than one page"
    assert [o.uuid for o in call.result.objects] == expected[:10] and call.result.truncated


def test_the_model_sees_the_executor_result_as_the_tool_message() -> None:
    model = scripted([tool_reply("query_database", OPEN_LATE), ModelReply(content="done")])
    run(model)
    tool_messages = tool_returns(model.calls[1]["messages"])
    assert len(tool_messages) == 1 and "open_late: true" in tool_messages[0].content


def test_a_repeated_call_runs_but_the_model_is_told_it_has_the_result() -> None:
    """A call identical to an earlier step's is executed (scoring sees its result) but the model
    gets a one-line reminder instead of the same result again; a different call is shown in full."""
    other = {"collection_name": NAME}
    model = scripted([tool_reply("query_database", OPEN_LATE), tool_reply("query_database", {**OPEN_LATE}),
                      tool_reply("query_database", other), ModelReply(content="done")])  # fmt: skip
    result = run(model, max_steps=4)
    first, again, different = result.calls()
    assert again.ok and again.result == first.result and again.repeat_of == 0
    assert first.repeat_of is None and different.repeat_of is None
    tools = [m.content for m in tool_returns(model.calls[3]["messages"])]
    assert "open_late: true" in tools[0] and tools[1].startswith("This is the same call as in step 1;")
    assert "open_late" not in tools[1] and "Collection: Offline" in tools[2]


def test_a_call_written_as_text_is_recovered_and_flagged() -> None:
    text = "I will query: <tool_call>" + json.dumps({"name": "query_database", "arguments": OPEN_LATE}) + "</tool_call>"
    result = run(scripted([ModelReply(content=text), ModelReply(content="ok")]))
    assert result.recovered_text_calls == 1 and result.calls()[0].recovered_from_text and result.calls()[0].ok


def test_a_typed_error_goes_back_and_the_correction_is_counted() -> None:
    wrong = {**OPEN_LATE, "boolean_property_filter": {"property_name": "opn_late", "operator": "=", "value": True}}
    model = scripted([tool_reply("query_database", wrong), tool_reply("query_database", OPEN_LATE), ModelReply()])
    result = run(model)
    first, second = result.calls()
    assert first.error is not None and first.error.code == "unknown_property" and "open_late" in first.error.message
    assert second.ok and result.corrections == 1 and result.outcome == "answered"


def test_the_correction_limit_stops_the_loop() -> None:
    wrong = {"collection_name": "Nowhere"}
    result = run(scripted([tool_reply("query_database", wrong)] * 4), max_steps=6, max_corrections=2)
    assert result.outcome == "correction_limit" and result.corrections == 3
    assert [c.error.code for c in result.calls() if c.error] == ["unknown_collection"] * 3


def test_an_unknown_tool_is_an_error_for_the_model() -> None:
    result = run(scripted([tool_reply("drop_database", OPEN_LATE), ModelReply(content="sorry")]))
    [call] = result.calls()
    assert call.error is not None and call.error.code == "unknown_tool" and "query_database" in call.error.message


@pytest.mark.parametrize(
    ("arguments", "code"),
    [
        ("{not json", "invalid_arguments"),
        ("[1, 2]", "invalid_arguments"),
        ('{"collection_name": 3}', "invalid_arguments"),
    ],
)
def test_malformed_arguments_are_typed_errors(arguments: str, code: str) -> None:
    reply = ModelReply(tool_calls=[{"id": "c1", "name": "query_database", "arguments": arguments}])
    result = run(scripted([reply, ModelReply(content="gave up")]))
    [call] = result.calls()
    assert call.error is not None and call.error.code == code and not call.ok


@pytest.mark.parametrize(
    ("error", "outcome"), [(ModelError("HTTP 500"), "model_error"), (ModelTimeout("no answer"), "timeout")]
)
def test_model_errors_end_the_run_with_their_outcome(error: Exception, outcome: str) -> None:
    result = run(scripted([tool_reply("query_database", OPEN_LATE), error]))
    assert result.outcome == outcome and result.error == str(error) and len(result.calls()) == 1


def test_no_tool_call_is_its_own_outcome() -> None:
    result = run(scripted([ModelReply(content="I know this already.")]))
    assert result.outcome == "no_tool_call" and result.calls() == []


def test_max_steps_bounds_a_model_that_never_answers() -> None:
    result = run(scripted([tool_reply("query_database", OPEN_LATE)] * 3), max_steps=3)
    assert result.outcome == "max_steps" and len(result.steps) == 3 and result.corrections == 0


def test_the_oracle_replays_its_label_through_the_loop() -> None:
    label = QueryDatabaseArguments.model_validate(OPEN_LATE)
    result = run(OracleModel(label))
    assert result.outcome == "answered" and result.calls()[0].arguments == label.to_tool_arguments()


def test_json_nested_too_deeply_is_the_models_error_not_a_crash() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    reply = ModelReply(tool_calls=[{"id": "c1", "name": "query_database", "arguments": deep}])
    result = run(scripted([reply, ModelReply(content="sorry")]))
    [call] = result.calls()
    assert result.outcome == "answered" and call.error is not None and call.error.code == "invalid_arguments"


def test_a_per_collection_tool_keeps_its_own_collection() -> None:
    other = sample_schema("Other").collections[0]
    schema = DatabaseSchema(collections=(SCHEMA.collections[0], other))
    executor = ReferenceExecutor(schema, {NAME: OBJECTS, "Other": []})
    tools = build_tools(schema, ToolDesign(ToolVariant.PER_COLLECTION), counter=estimate_counter())
    wrong = {**OPEN_LATE, "collection_name": "Other"}  # the model names another collection inside the tool
    model = scripted([tool_reply(tool_function_name(NAME), wrong), ModelReply(content="done")])
    result = Agent(model, executor, tools, AgentConfig()).run("Which places are open late?")
    [call] = result.calls()
    assert call.arguments is not None and call.arguments["collection_name"] == NAME
    assert call.result is not None and call.result.collection == NAME and call.result.objects


# --- the committed answer (`agent.answer`) ------------------------------------------------------

COMMITTED = {
    "numbers": [12],
    "names": [],
    "groups": {},
    "cannot_answer": "",
    "sources": [],
    "is_partial_answer": False,
    "missing_information": [],
}


def test_after_the_prose_the_model_commits_a_typed_answer() -> None:
    model = scripted(
        [
            tool_reply("query_database", OPEN_LATE),
            ModelReply(content="Twelve places."),
            ModelReply(content=json.dumps(COMMITTED), usage=Usage(prompt_tokens=900, completion_tokens=40)),
        ]
    )
    result = run(model)
    assert result.final_answer == "Twelve places." and result.outcome == "answered"
    assert result.answer == FinalAnswer(numbers=[12]) and result.commit.error is None
    asked = model.calls[-1]
    assert is_commit_request(asked["response_format"]) and asked["tool_choice"] == "none"
    assert asked["messages"][-1] == ModelRequest.user(COMMIT_PROMPT)
    assert asked["messages"][-2] == ModelResponse.of("Twelve places.")
    assert result.usage.completion_tokens == 40 and result.commit.usage.prompt_tokens == 900  # counted in the run's


def test_a_commit_that_does_not_parse_is_recorded_and_the_prose_stands() -> None:
    result = run(
        scripted([tool_reply("query_database", OPEN_LATE), ModelReply(content="12."), ModelReply(content="12")])
    )
    assert result.outcome == "answered" and result.final_answer == "12."
    assert result.answer is None and "not a JSON object" in (result.commit.error or "")


def test_a_failed_commit_request_ends_nothing() -> None:
    result = run(scripted([tool_reply("query_database", OPEN_LATE), ModelReply(content="12."), ModelError("down")]))
    assert result.outcome == "answered" and result.answer is None and "down" in (result.commit.error or "")


def test_without_the_contract_there_is_no_commit_turn() -> None:
    model = scripted([tool_reply("query_database", OPEN_LATE), ModelReply(content="12.")])
    result = run(model, commit_answer=False)
    assert result.commit is None and len(model.calls) == 2


def test_the_loop_commits_nothing_when_it_stopped_without_an_answer() -> None:
    result = run(scripted([tool_reply("query_database", OPEN_LATE)] * 3), max_steps=2)
    assert result.outcome == "max_steps" and result.commit is None


def test_the_oracle_commits_what_it_was_told_and_cites_what_it_was_shown() -> None:
    oracle = OracleModel(OPEN_LATE).knowing([OPEN_LATE], "Twelve.", {"numbers": [12]})
    result = run(oracle)
    assert result.answer is not None and result.answer.numbers == [12]
    shown = [uuid[:8] for uuid in open_late_uuids()[:LLM_MAX_OBJECTS]]  # the objects the result showed
    assert result.answer.sources == shown
    refusing = run(OracleModel.abstaining("The database has no calorie property."))
    assert refusing.answer is not None and refusing.answer.refuses and not refusing.calls()


def test_each_structured_turn_registers_the_oracle_s_reply_beside_its_schema_and_an_unknown_turn_is_an_error() -> None:
    import agent.strategies  # noqa: F401  every strategy module, and the turns each defines
    from agent.models import ORACLE_REPLIES, ModelError, OracleModel
    from agent.strategies.check_turns import CHECK_SCHEMA_NAME, VERDICT_SCHEMA_NAME
    from agent.strategies.codes import NO_CODE, VALUE_SCHEMA_NAME
    from agent.strategies.decompose import DECOMPOSE_SCHEMA_PREFIX, STEPS
    from agent.strategies.facts import GROUNDED_SCHEMA_NAME
    from agent.strategies.plan import PLAN_SCHEMA_NAME
    from agent.strategies.rewrite import FOLLOW_UP_SCHEMA_NAME
    from llm import ChatRequest, ResponseFormat

    turns = {CHECK_SCHEMA_NAME, VERDICT_SCHEMA_NAME, VALUE_SCHEMA_NAME, GROUNDED_SCHEMA_NAME, PLAN_SCHEMA_NAME}
    turns |= {FOLLOW_UP_SCHEMA_NAME, *(f"{DECOMPOSE_SCHEMA_PREFIX}{step}" for step in STEPS)}
    assert turns <= set(ORACLE_REPLIES)

    def asked(name: str, schema: dict[str, Any]) -> str | None:
        request = ChatRequest(
            messages=[ModelRequest.prompt("s", "q")], response_format=ResponseFormat(name=name, json_schema=schema)
        )
        return OracleModel({"collection_name": "Restaurants"}).complete(request).content

    choices = {"properties": {"value": {"enum": [NO_CODE, "AK"]}}}
    assert json.loads(asked(VALUE_SCHEMA_NAME, choices) or "{}") == {"value": NO_CODE}, "a gold value is stored"
    with pytest.raises(ModelError, match="no reply to the structured turn 'NewTurn'"):
        asked("NewTurn", {})
