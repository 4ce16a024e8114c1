"""`chain`'s rewrite of a follow-up part so that it names the answer of the part before it ("of that
subject" -> "of the subject Biology"): its prompt, its schema and what the oracle replies to it."""

from __future__ import annotations

import json
from typing import Any

from agent.models import ModelError, OracleModel, oracle_replies
from llm import ChatRequest, ModelRequest, ResponseFormat, Usage, UserPromptPart
from llm.messages import all_parts

#: The rewrite's schema name, and where its prompt puts the follow-up.
FOLLOW_UP_SCHEMA_NAME = "FollowUpQuestion"
FOLLOW_UP_MARK = "Follow-up question: "
REWRITE_SYSTEM = "You rewrite a follow-up question so that it stands alone."
REWRITE_PROMPT = (
    "Earlier question: {earlier}\nIts answer: {answer}\n"
    "Rewrite the follow-up question so that it names the answer where it refers to it, with what it is "
    '("of that subject" -> "of the subject Biology"). Change nothing else.\n' + FOLLOW_UP_MARK + "{follow_up}"
)
REWRITE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"question": {"type": "string", "maxLength": 300}},
    "required": ["question"],
    "additionalProperties": False,
}


def rewrite(model: Any, earlier: str, answer: str, follow_up: str) -> tuple[str, Usage, str]:
    """The follow-up naming `answer`; the model's rewrite when it names it, else the follow-up with the
    answer after it. Returns the question, the tokens spent and how it was made."""
    prompt = REWRITE_PROMPT.format(earlier=earlier, answer=answer, follow_up=follow_up)
    usage = Usage()
    try:
        reply = model.complete(
            ChatRequest(
                messages=[ModelRequest.prompt(REWRITE_SYSTEM, prompt)],
                response_format=ResponseFormat(name=FOLLOW_UP_SCHEMA_NAME, json_schema=REWRITE_SCHEMA),
            )
        )
        usage = reply.usage
        written = str(json.loads(reply.content or "{}").get("question", "")).strip()
    except (ModelError, ValueError, AttributeError) as error:
        written, how = "", f"fell back: {type(error).__name__}"
    else:
        how = "rewritten"
    if not written or answer.lower() not in written.lower():
        return f'{follow_up} (The answer to "{earlier}" is {answer}.)', usage, how if not written else "appended"
    return written, usage, how


@oracle_replies(FOLLOW_UP_SCHEMA_NAME)
def oracle_rewrite(oracle: OracleModel, request: ChatRequest) -> dict[str, Any]:
    """The oracle's rewrite is the follow-up as asked: the chain then puts the answer after it."""
    asked = [p.content for p in all_parts(request.messages) if isinstance(p, UserPromptPart)]
    return {"question": asked[-1].split(FOLLOW_UP_MARK)[-1] if asked else ""}
