"""The function-calling loop: tool schema from the live database, model calls, executor results.

from agent import Agent, OpenAIChatModel, build_tools
tools = build_tools(executor.schema)            # the paper's query_database, from the live schema
model = OpenAIChatModel("qwen2.5-coder-1.5b", base_url="http://127.0.0.1:8012/v1")   # any endpoint
run = Agent(model, executor, tools).run("Which vegan places open late?")
run.final_answer, run.steps, run.outcome        # a full trace, JSON-serialisable

The agent never starts servers: `dbgorilla.chat.resolve_model` (the CLI's) starts the local one.
"""

from agent.loop import Agent, AgentConfig, AgentRun, ExecutedCall, ResponseOrToolCall, Step, StopReason
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
    "StopReason",
    "ToolDesign",
    "ToolSet",
    "ToolVariant",
    "Usage",
    "build_tools",
    "schema_limit_violations",
]
