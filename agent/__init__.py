"""The function-calling loop: tool schema from the live database, model calls, executor results.

from agent import Agent, build_tools, resolve_model
tools = build_tools(executor.schema)            # the paper's query_database, from the live schema
run = Agent(resolve_model(None, None), executor, tools).run("Which vegan places open late?")
run.final_answer, run.steps, run.outcome        # a full trace, JSON-serialisable
"""

from agent.loop import Agent, AgentConfig, AgentRun, ExecutedCall, ResponseOrToolCall, Step
from agent.models import (
    ORACLE,
    ChatModel,
    ModelError,
    ModelReply,
    ModelTimeout,
    ModelUnavailable,
    OpenAIChatModel,
    OracleModel,
    RawToolCall,
    Usage,
    local_model,
    resolve_model,
)
from agent.tooldef import (
    DEFAULT_TOKEN_BUDGET,
    TOOL_NAME,
    ToolDesign,
    ToolSet,
    ToolVariant,
    build_tools,
    schema_limit_violations,
)

__all__ = [
    "DEFAULT_TOKEN_BUDGET",
    "ORACLE",
    "TOOL_NAME",
    "Agent",
    "AgentConfig",
    "AgentRun",
    "ChatModel",
    "ExecutedCall",
    "ModelError",
    "ModelReply",
    "ModelTimeout",
    "ModelUnavailable",
    "OpenAIChatModel",
    "OracleModel",
    "RawToolCall",
    "ResponseOrToolCall",
    "Step",
    "ToolDesign",
    "ToolSet",
    "ToolVariant",
    "Usage",
    "build_tools",
    "local_model",
    "resolve_model",
    "schema_limit_violations",
]
