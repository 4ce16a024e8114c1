"""Ask a model plain questions about a real public dataset, as a new user would, and grade them.

    python scripts/ask_public_data.py [--model qwen2.5-coder-1.5b] [--base-url URL] [--strategy check+grounded]

Loads the first 1,000 days of Seattle's weather (vega_datasets) into a `SeattleWeather` collection
of the Weaviate `dbgorilla up` started (replacing it), then asks through `QueryAgent` over that
collection alone: the three of `weather_questions` (a count over a filter, a mean over a filtered
subset, a count per group), then `weather_more_questions`: seven more, and three the data cannot
answer. The gold answers come from the CSV; an answer is graded by the benchmark's own grader, and a
question the data cannot answer is right only when refused.
"""

from __future__ import annotations

import argparse
import time

from agent.query_agent import QueryAgent
from agent.strategies import DEFAULT_STRATEGY, needs_retriever
from dbgorilla.chat import resolve_model
from dbgorilla.config import Settings
from dbgorilla.connection import connect
from evaluation.answers import AnswerKey, KeyNumber, grade
from evaluation.refusal import grade_abstention, grade_committed_abstention
from fixtures.examples import ExampleMemory
from fixtures.public_data import (
    COLLECTION,
    create_weather_collection,
    weather_more_questions,
    weather_questions,
    weather_rows,
)


def key_of(answer: float | dict[str, float]) -> AnswerKey:
    if isinstance(answer, dict):
        return AnswerKey(groups={name: KeyNumber(value=value) for name, value in answer.items()})
    return AnswerKey(numbers=[KeyNumber(value=answer)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None)
    parser.add_argument("--base-url", default=None)
    parser.add_argument("--strategy", default=DEFAULT_STRATEGY, help="e.g. check+examples+grounded")
    args = parser.parse_args()
    rows = weather_rows()
    with connect(Settings()) as client:
        print(f"loaded {create_weather_collection(client, rows)} objects into {COLLECTION}")
        chat = resolve_model(args.model, args.base_url)
        # examples come from the natural split's five use cases: other databases than this one
        memory = ExampleMemory(client) if needs_retriever(args.strategy) else None
        if memory is not None:
            memory.ensure_seeded()
        agent = QueryAgent(client, [COLLECTION], chat, strategy=args.strategy, retriever=memory)
        right = 0
        asked = [*weather_questions(rows), *weather_more_questions(rows)]
        for question in asked:
            started = time.perf_counter()
            response = agent.ask(question.question)
            if question.answer is None:  # graded as the abstention split is: the committed answer, else the text
                verdict = (
                    grade_committed_abstention(response.answer)
                    if response.answer is not None
                    else grade_abstention(response.final_answer, question.question)
                )
            else:
                verdict = grade(response.final_answer, key_of(question.answer), question.question)
            correct, reason = bool(verdict.correct), verdict.reason or ""
            right += correct
            calls = [c.arguments or c.raw_arguments for c in response.trace.calls()]
            print(f"\nQ: {question.question}\n   gold: {question.answer}")
            print(f"   calls: {calls}")
            print(f"   answer: {response.final_answer!r}")
            seconds = time.perf_counter() - started
            print(f"   {'RIGHT' if correct else 'WRONG'}: {reason}  ({seconds:.1f} s)")
        print(f"\n{right} of {len(asked)} right with {chat.name}, strategy {args.strategy}")


if __name__ == "__main__":
    main()
