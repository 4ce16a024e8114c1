"""The tool definition: routing enum, OpenAI-compatible schema limits, the token budget, text recovery."""

from __future__ import annotations

import json

import pytest

from agent import TOOL_NAME, ToolDesign, ToolVariant, build_tools, schema_limit_violations
from agent._recover import recover_tool_calls
from agent.tokens import estimate_counter
from executors import CollectionSchema, DatabaseSchema, PropertySchema, QueryDatabaseArguments
from executors.vocabulary import ToolOperations


def collection(name: str, words: int = 5) -> CollectionSchema:
    detail = " ".join(["detail"] * words)
    return CollectionSchema(
        name=name,
        description=f"All about {name}. {detail}.",
        properties=(
            PropertySchema(name="title", data_type="text", description=f"Short title. {detail}"),
            PropertySchema(name="price", data_type="number", description=f"Price in euros. {detail}"),
            PropertySchema(name="open", data_type="boolean", description=f"Open now. {detail}"),
        ),
    )


SCHEMA = DatabaseSchema(collections=(collection("Restaurants"), collection("Menus")))


@pytest.mark.parametrize(
    "design",
    [
        ToolDesign(),
        ToolDesign(rationale=True),
        ToolDesign(variant=ToolVariant.PER_COLLECTION),
        ToolDesign(variant=ToolVariant.PER_COLLECTION, rationale=True),
    ],
)
def test_every_variant_stays_within_provider_schema_limits(design: ToolDesign) -> None:
    tools = build_tools(SCHEMA, design, estimate_counter())
    for tool in tools.tools:
        assert schema_limit_violations(tool["function"]["parameters"]) == []
        assert tool["function"]["parameters"]["additionalProperties"] is False


def test_unified_tool_routes_by_an_enum_and_follows_appendix_a() -> None:
    paper = ToolDesign(operations=ToolOperations.PAPER)  # the paper's tool, as an option beside the default
    [tool] = build_tools(SCHEMA, paper, counter=estimate_counter()).tools
    function = tool["function"]
    assert function["name"] == TOOL_NAME
    assert function["parameters"]["properties"]["collection_name"]["enum"] == ["Restaurants", "Menus"]
    assert function["parameters"]["required"] == ["collection_name"]
    assert function["description"].startswith("Query a database with an optional search query")
    assert "price (number): Price in euros." in function["description"]
    assert set(function["parameters"]["properties"]) == {"collection_name", *QueryDatabaseArguments.model_fields} - {
        "collection_name"
    } | {"collection_name"}


def test_limit_checker_catches_what_providers_reject() -> None:
    bad = {
        "type": "object",
        "properties": {f"k{i}": {"anyOf": [{"type": "string"}, {"$ref": "#/x"}]} for i in range(17)},
    }
    problems = schema_limit_violations(bad)
    assert any("17 properties" in p for p in problems) and any("anyOf" in p for p in problems)
    assert any("$ref" in p for p in problems)


def test_budget_shortens_step_by_step_and_says_how() -> None:
    big = DatabaseSchema(collections=tuple(collection(f"Collection{i}", words=30) for i in range(12)))
    full = build_tools(big, ToolDesign(token_budget=100_000), estimate_counter())
    assert full.shortening == [] and full.description_tokens > 1024
    fitted = build_tools(big, ToolDesign(token_budget=1024), estimate_counter())
    assert fitted.description_tokens <= 1024 and fitted.shortening
    assert fitted.shortening[0] == "dropped property descriptions"
    tiny = build_tools(big, ToolDesign(token_budget=120), estimate_counter())
    assert tiny.shortening[-1] in ("listed collection names only",) or "only" in tiny.shortening[-1]
    assert all(f"Collection{i}" in tiny.description for i in range(12)), "routing names are never dropped"


@pytest.mark.parametrize(
    "content",
    [
        '{"collection_name": "Menus", "search_query": "soup"}',
        '```json\n{"name": "query_database", "arguments": {"collection_name": "Menus", "search_query": "soup"}}\n```',
        '<tool_call>{"name": "query_database", "parameters": "{\\"collection_name\\": \\"Menus\\", \\"search_query\\": \\"soup\\"}"}</tool_call>',
        'Calling now: [{"function_name": "query_database", "arguments": {"collection_name": "Menus", "search_query": "soup"}}] ok',
    ],
)
def test_text_calls_are_recovered_in_every_seen_form(content: str) -> None:
    [recovered] = recover_tool_calls(content, [TOOL_NAME])
    assert recovered.name == TOOL_NAME
    assert json.loads(recovered.arguments) == {"collection_name": "Menus", "search_query": "soup"}


def test_plain_prose_and_foreign_json_are_not_calls() -> None:
    assert recover_tool_calls("The answer is 42.", [TOOL_NAME]) == []
    assert recover_tool_calls('{"answer": 42}', [TOOL_NAME]) == []
    assert recover_tool_calls('{"name": "rm_rf", "arguments": {}}', [TOOL_NAME]) == []


def test_tools_of_two_databases_share_everything_before_the_collection_enum() -> None:
    """The prompt-cache prefix: a server that renders the tool in order reuses all of it."""
    [first] = build_tools(DatabaseSchema(collections=(collection("Restaurants"),)), counter=estimate_counter()).tools
    [second] = build_tools(DatabaseSchema(collections=(collection("Courses"),)), counter=estimate_counter()).tools
    one, two = json.dumps(first), json.dumps(second)
    shared = next(i for i, (a, b) in enumerate(zip(one, two, strict=False)) if a != b)
    assert one[:shared].endswith(
        '"collection_name": {"description": "The collection to query.", "type": "string", "enum": ["'
    )
    assert '"description": "Query a database' not in one[:shared]
    assert all(f'"{slot}"' in one[:shared] for slot in QueryDatabaseArguments.model_fields if slot != "collection_name")
