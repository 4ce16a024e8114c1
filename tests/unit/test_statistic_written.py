"""The statistic a question asks for is read from its words (`statistic_written`), not written by the model in
the check's reply: the first statistic written decides, and a question that names none lists or groups."""

from __future__ import annotations

import pytest

from agent.strategies.asked_for import STATISTICS, statistic_written
from agent.strategies.check_turns import ABOUT_STOP, about_decided, about_request
from executors.schema import CollectionSchema
from llm import OpenAIChatModel


@pytest.mark.parametrize(
    ("question", "statistic"),
    [
        ("How many ferries leave before noon?", "count"),
        ("What is the total number of ferries?", "count"),
        ("How many ferries charge more than the average fare?", "count"),
        ("What is the average fare of the ferries to Oslo?", "average"),
        ("How many hours do the night ferries take on average?", "average"),
        ("What's the mean crossing time?", "average"),
        ("What is the median fare?", "median"),
        ("What is the total tonnage of the fleet?", "sum"),
        ("Which ferry has the longest crossing?", "maximum"),
        ("What is the cheapest fare to Kiel?", "minimum"),
        ("What is the most common port of call?", "most common"),
        ("What percentage of ferries carry cars?", "percentage"),
        ("What share of the crossings run at night?", "percentage"),
        ("What is the standard deviation of the fares?", "standard deviation"),
        ("How correlated are fare and distance?", "correlation"),
        ("List the ferries that carry cars.", "none"),
        ("List the ferries with at least 200 berths.", "none"),
        ("Show the ferries by home port.", "none"),
    ],
)
def test_the_first_statistic_written_is_the_one_asked(question: str, statistic: str) -> None:
    assert statistic_written(question) == statistic
    assert statistic in STATISTICS, "a statistic the rest of the check reads"


def test_the_check_reply_is_stopped_where_its_statistic_begins_and_read_up_to_there() -> None:
    """The schema keeps the field (without it the model wrote on in `asks_for`), but the reply stops at its key."""
    about = about_request([CollectionSchema(name="Ferries", properties=[])], "How many ferries?")
    fields = about.response_format.json_schema["properties"] if about.response_format else {}
    assert list(fields) == ["collection", "asks_for", "statistic"] and about.stop == [ABOUT_STOP]
    assert OpenAIChatModel("m", base_url="http://127.0.0.1:9/v1").body(about)["stop"] == [ABOUT_STOP]
    stopped = '{ "collection": "Ferries", "asks_for": "fare", '
    assert about_decided(stopped) == {"collection": "Ferries", "asks_for": "fare"}
    assert about_decided(stopped + '"statistic": "none"}')["statistic"] == "none", "a whole reply reads as it is"
    with pytest.raises(ValueError):
        about_decided('{ "collection": "Ferries", "asks_for": "the \\"stat')
