"""`chain`'s rewrite of a follow-up part so that it names the answer of the part before it ("of that
subject" -> "of the subject Biology"): its prompt, its schema and what the oracle replies to it."""

from __future__ import annotations

import json
import re
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
    if not written or answer.lower() not in written.lower() or invented(written, earlier, answer, follow_up):
        return f'{follow_up} (The answer to "{earlier}" is {answer}.)', usage, how if not written else "appended"
    return written, usage, how


#: A name or a number in a rewrite: what it must have read somewhere.
_NAME_OR_NUMBER = re.compile(r"\b(?:[A-Z][\w'-]*|\d[\d.,]*)")


def invented(written: str, *read: str) -> bool:
    """Whether the rewrite names something none of what it `read` names: the small model copied the prompt's
    example into one ("How many did she get there in Biology?", 2026-12-03), a fact from nowhere."""
    seen = " ".join(read).lower()
    return any(w.lower().strip(".,") not in seen for w in _NAME_OR_NUMBER.findall(written))


#: A verb a part may end on in place of the earlier part's predicate ("and how many virginica flowers do?").
_STANDS_FOR_VERB = frozenset({"do", "does", "did"})
#: At most this many words left out after a part's opening ("how many [airports] does California have").
_MAX_GAP = 4


def completed(earlier: str, later: str) -> str:
    """`later` with the words it leaves to `earlier` put back, where it leaves them out as people do after
    "and": the thing counted ("How many airports does Texas have, and how many does California have?": "how
    many airports does California have?") or the predicate, ended on a verb ("How many versicolor flowers
    have a sepal length over 6 cm, and how many virginica flowers do?"). Otherwise `later` as it is."""
    before, after = earlier.rstrip(" ?").split(), later.rstrip(" ?").split()
    said, asked = [w.lower().strip(",;") for w in before], [w.lower().strip(",;") for w in after]
    lead = 0
    while lead < min(len(said), len(asked)) and said[lead] == asked[lead]:
        lead += 1
    if 0 < lead < len(asked) and asked[lead] in said[lead + 1 : lead + 1 + _MAX_GAP]:
        gap = before[lead : said.index(asked[lead], lead + 1)]
        if not any(w.lower().strip(",;") in asked for w in gap):
            return " ".join([*after[:lead], *gap, *after[lead:]]) + "?"
    if lead and len(asked) > lead + 1 and asked[-1] in _STANDS_FOR_VERB and asked[-2] in said[lead:]:
        predicate = before[said.index(asked[-2], lead) + 1 :]
        if predicate and not any(w.endswith((",", ";")) for w in predicate):
            return " ".join([*after[:-1], *predicate]) + "?"
    return later


@oracle_replies(FOLLOW_UP_SCHEMA_NAME)
def oracle_rewrite(oracle: OracleModel, request: ChatRequest) -> dict[str, Any]:
    """The oracle's rewrite is the follow-up as asked: the chain then puts the answer after it."""
    asked = [p.content for p in all_parts(request.messages) if isinstance(p, UserPromptPart)]
    return {"question": asked[-1].split(FOLLOW_UP_MARK)[-1] if asked else ""}
