"""What a strategy sends first, per prefix: the requests whose system turns a warm server keeps.

A question's first turn on a cold server evaluates its system turn (the tools of one collection, the
check's listing of collections: about 1,300 tokens, 15-20 s on 2 cores) before its own words. The
server keeps each system turn's state once evaluated (`dbgorilla.llm_server.PrefixStore`), so sending
every opening once, before the first question, makes that question as fast as the later ones. Only
the strategies that change a system turn (`check`, `typed`) or send one (the loop) say what they send;
any other hands the question to its `inner` and sends what that sends. Likewise, the one that changes
the tools the model is offered (`typed`) says what it offers (`offered_tools`), for a strategy outside it
that shows the model calls (`examples`).
"""

from __future__ import annotations

from typing import Any

from agent.loop import AgentConfig, Executor
from agent.tooldef import ToolSet
from llm import ChatRequest


def openings_of(
    strategy: Any, model: Any, executor: Executor, tools: ToolSet, config: AgentConfig
) -> list[ChatRequest]:
    """The first request of each prefix `strategy` would send, its own or its inner strategy's."""
    own = getattr(strategy, "openings", None)
    if own is not None:
        return list(own(model, executor, tools, config))
    inner = getattr(strategy, "inner", None)
    if inner is None:
        raise TypeError(f"strategy {getattr(strategy, 'name', strategy)!r} has neither openings nor an inner strategy")
    return openings_of(inner, model, executor, tools, config)


def offered_tools(strategy: Any, executor: Executor, tools: ToolSet, config: AgentConfig) -> ToolSet:
    """The tools the model is offered under `strategy`: those the first inner strategy that changes them
    offers (`offers`), else `tools` as given."""
    while strategy is not None:
        own = getattr(strategy, "offers", None)
        if own is not None:
            return own(executor, tools, config)
        strategy = getattr(strategy, "inner", None)
    return tools
