"""`dbgorilla ask`: one question through the full loop, shown readably (or as a JSON trace)."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table

from agent import ORACLE, AgentConfig, AgentRun, ExecutedCall
from agent.conversation import Turn
from agent.query_agent import response_of
from agent.strategies import canonical
from agent.tooldef import DEFAULT_OPERATIONS, DEFAULT_TOKEN_BUDGET
from dbgorilla.chat import resolve_model
from dbgorilla.cli.console import NamespaceOption, connected, design_from_flags, out, say
from dbgorilla.cli.doors import chosen_use_case, door_session
from dbgorilla.cli.strategy_options import DEFAULT_STRATEGY, StrategyOption, check_strategy
from dbgorilla.config import Settings
from dbgorilla.errors import ConfigError
from executors import QueryResult


def register(app: typer.Typer) -> None:
    app.command("ask")(ask)


def ask(
    question: Annotated[str, typer.Argument(help="A question about the data.")],
    use_case: Annotated[str | None, typer.Option(help="Offer only this use case's collections.")] = None,
    collections: Annotated[
        str | None, typer.Option(help="Offer only these collections of your Weaviate, comma-separated: A,B.")
    ] = None,
    model: Annotated[str | None, typer.Option(help="Model name; a local one unless --base-url is given.")] = None,
    base_url: Annotated[str | None, typer.Option(help="Any OpenAI-compatible endpoint (key: OPENAI_API_KEY).")] = None,
    max_steps: Annotated[int, typer.Option(min=1, help="Model turns before giving up.")] = 4,
    variant: Annotated[str, typer.Option(help="unified | per-collection")] = "unified",
    rationale: Annotated[bool, typer.Option(help="Require a rationale argument.")] = False,
    parallel: Annotated[bool | None, typer.Option("--parallel/--sequential", help="Send parallel_tool_calls.")] = None,
    structured: Annotated[bool, typer.Option(help="ResponseOrToolCall via response_format, no native tools.")] = False,
    token_budget: Annotated[int, typer.Option(help="Tool description budget in tokens.")] = DEFAULT_TOKEN_BUDGET,
    operations: Annotated[
        str | None,
        typer.Option(
            help="compound (the default): any number of conditions joined by and/or, dates and a sort; paper: the "
            "paper's tool exactly; related: the paper's plus a reference filter, a date filter and a sort."
        ),
    ] = None,
    scope: Annotated[
        list[str] | None,
        typer.Option(
            help="Collection.property<op>value ANDed into every query the model makes (repeatable); "
            "collections not named are hidden. E.g. Restaurants.city=Lisbon"
        ),
    ] = None,
    namespace: NamespaceOption = "",
    strategy: StrategyOption = DEFAULT_STRATEGY,
    show_code: Annotated[
        bool,
        typer.Option(
            "--show-code", help="After each call, a weaviate-client v4 program that runs it: paste it into your code."
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the whole trace as JSON.")] = False,
    carry_on: Annotated[
        bool,
        typer.Option(
            "--continue",
            help="Carry on the last conversation: a follow-up ('how many of those ...') keeps what the last "
            "answer found. Without it, a new conversation starts.",
        ),
    ] = False,
) -> None:
    """Ask a question: the model queries Weaviate through query_database until it can answer."""
    if model == ORACLE:
        raise ConfigError("the oracle replays ground truth: use it with `dbgorilla eval --model oracle`")
    design = design_from_flags(
        variant, rationale, parallel, structured, token_budget, operations or DEFAULT_OPERATIONS.value
    )
    check_strategy(strategy)
    chosen = chosen_use_case(use_case)  # a use case's collections live under the namespace and must be ours
    with connected() as client:
        config = AgentConfig(max_steps=max_steps)
        session = door_session(client, chosen, collections, scope, namespace, design, strategy, config)
        session = session.with_model(resolve_model(model, base_url, echo=say))
        if not as_json:
            tools = session.tools
            out.print(
                f"[bold]{question}[/]  [dim]model={session.model.name} strategy={canonical(strategy)} "
                f"tools={tools.design.label()} description={tools.description_tokens}/{design.token_budget} tokens[/]"
            )
        shown = partial(show_call, show_code=show_code)
        earlier = load_conversation() if carry_on else []
        run = session.run(question, None if as_json else shown, earlier)  # the calls shown as they finish
        save_conversation([*earlier, session.turn_of(run, earlier)])
    if as_json:
        print(run.model_dump_json(indent=2))
    else:
        show_run(run, session.collection_names)


def conversation_path() -> Path:
    """Where `ask` keeps the last conversation's turns (the state directory, like the services' records)."""
    return Settings().state_dir / "conversation.json"


def load_conversation() -> list[Turn]:
    """The last conversation's turns; none when there is none (a new one starts, said on stderr)."""
    path = conversation_path()
    if not path.exists():
        say("no earlier conversation to continue: this question starts one")
        return []
    try:
        return [Turn.model_validate(t) for t in json.loads(path.read_text())]
    except (ValueError, TypeError) as error:
        raise ConfigError(f"{path} is not a conversation this version wrote ({error}); ask anew") from None


def save_conversation(turns: list[Turn]) -> None:
    path = conversation_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps([t.model_dump(mode="json") for t in turns], indent=1))


def show_run(run: AgentRun, collection_names: list[str]) -> None:
    """The answer, what it rests on, and whether it is partial (the calls were shown as they ran)."""
    response = response_of(run, collection_names)
    out.print(
        Panel(run.final_answer or f"(no answer: {run.outcome}{': ' + run.error if run.error else ''})", title="answer")
    )
    if response.answer is not None:
        out.print(f"[bold]committed:[/] {escape(response.answer.text())}", highlight=False)
    elif run.commit is not None:
        out.print(f"[yellow]no committed answer:[/] {escape(run.commit.error or '')}", highlight=False)
    if response.sources:
        shown = ", ".join(f"{s.collection} {s.object_id}" for s in response.sources[:5])
        more = f" and {len(response.sources) - 5} more" if len(response.sources) > 5 else ""
        out.print(f"[dim]sources: {shown}{more}[/]", highlight=False)
    if response.unreceived_citations:
        out.print(
            "[yellow]cites ids no result contained:[/] " + ", ".join(response.unreceived_citations), highlight=False
        )
    if response.is_partial_answer:
        out.print("[yellow]partial answer:[/] " + "; ".join(response.missing_information), highlight=False)
    out.print(
        f"[dim]outcome={run.outcome} steps={len(run.steps)} corrections={run.corrections} "
        f"recovered_text_calls={run.recovered_text_calls} "
        f"tokens={run.usage.prompt_tokens}+{run.usage.completion_tokens} "
        f"latency={run.latency_s:.1f}s[/]"
    )


def show_call(step: int, call: ExecutedCall, show_code: bool = False) -> None:
    """A call, the Weaviate calls it became, and its result (or typed error), printed as it finishes;
    with `show_code`, the program that makes those calls, plain, so it pastes as it is."""
    flag = " [yellow](recovered from text)[/]" if call.recovered_from_text else ""
    out.print(f"[cyan]step {step + 1}: {call.tool_name}[/]{flag} {json.dumps(call.arguments or call.raw_arguments)}")
    for line in call.weaviate_call:
        out.print(f"  [green]weaviate:[/] {line}", highlight=False)
    if call.error is not None:
        out.print(f"  [red]error ({call.error.code}):[/] {call.error.message}", highlight=False)
    elif call.result is not None:
        out.print(result_table(call.result))
        program = call.result.program() if show_code else None
        if program is not None:
            out.print(f"[dim]--- code: step {step + 1} ---[/]")
            out.print(program, markup=False, highlight=False, soft_wrap=True)


def result_table(result: QueryResult, max_rows: int = 10) -> Table:
    if result.groups is not None:
        table = Table(result.group_by or "group", "count", "aggregations", title=f"{result.collection}: groups")
        for key, group in list(result.groups.items())[:max_rows]:
            table.add_row(
                key, str(group.count), json.dumps(group.aggregations, default=str) if group.aggregations else ""
            )
        return table
    if result.aggregations:
        table = Table("property", "metric", "value", title=f"{result.collection}: aggregation")
        for prop, metrics in result.aggregations.items():
            for metric, value in metrics.items():
                shown = ", ".join(f"{t.value} ({t.count})" for t in value) if isinstance(value, list) else str(value)
                table.add_row(prop, metric, shown)
        return table
    columns = list(result.objects[0].properties) if result.objects else []
    table = Table(
        "rank",
        *columns,
        title=f"{result.collection}: {_count(result)} objects",
    )
    for index, obj in enumerate(result.objects[:max_rows]):
        table.add_row(str(obj.rank or index + 1), *(str(obj.properties.get(c, ""))[:60] for c in columns))
    return table


def _count(result: QueryResult) -> int:
    return len(result.objects) if result.total_count is None else result.total_count
