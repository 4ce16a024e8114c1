"""A perfect model in its own process, so a test can kill it with -9: the ground-truth call of the
default split's question, then a one-word answer. Prints its base URL, then serves until killed.

    python -m tests.integration._replay_model [seconds of delay per reply]
"""

from __future__ import annotations

import sys
import time
from typing import Any

from agent.testing import MockOpenAIServer, Reply, call, text
from fixtures.datasets import load_split

TRUTH = {case.query: case.ground_truth.to_tool_arguments() for case in load_split()}


def main() -> None:
    delay = float(sys.argv[1]) if len(sys.argv) > 1 else 0.0

    def replay(body: dict[str, Any], index: int) -> Reply:
        time.sleep(delay)
        question = next(m["content"] for m in body["messages"] if m["role"] == "user")
        if any(m["role"] == "tool" for m in body["messages"]):
            return text("answer")
        return call("query_database", TRUTH[question])

    with MockOpenAIServer(replay) as server:
        print(server.base_url, flush=True)
        while True:
            time.sleep(3600)


if __name__ == "__main__":
    main()
