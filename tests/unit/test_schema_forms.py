"""`SchemaForms`: a schema is sent the first way an endpoint takes, and requests in flight together
never narrow the forms further than the one that worked."""

from __future__ import annotations

from typing import Any

import pytest

from agent import ModelError
from llm.providers.openai_compatible import SCHEMA_FORMS, SchemaForms

SCHEMA = {"type": "object"}


class Refused(Exception):
    """What the openai client raises for an error status: it carries `status_code`."""

    status_code = 500


def refusing(refused: set[str | None], asked: list[str | None]) -> Any:
    def ask(response_format: dict[str, Any] | None) -> str:
        kind = response_format["type"] if response_format else None
        asked.append(kind)
        if kind in refused:
            raise ModelError(f"{kind} refused") from Refused()
        return f"answered under {kind}"

    return ask


def test_the_first_form_taken_is_kept_and_the_schema_goes_with_it() -> None:
    forms, asked = SchemaForms(), []
    sent: list[dict[str, Any] | None] = []

    def ask(response_format: dict[str, Any] | None) -> str:
        sent.append(response_format)
        return refusing({"json_schema"}, asked)(response_format)

    assert forms.send(ask, "Answer", SCHEMA) == "answered under json_object"
    assert forms.send(ask, "Answer", SCHEMA) == "answered under json_object"
    assert asked == ["json_schema", "json_object", "json_object"]
    assert sent[1] == {"type": "json_object", "schema": SCHEMA} and forms.used == "json_object"
    assert forms.forms == ["json_object", "none"]


def test_requests_in_flight_together_narrow_the_forms_once() -> None:
    """Two requests both refused `json_schema` and both answered under `json_object`: deleting by
    position twice would have dropped `json_object` too."""
    forms, asked = SchemaForms(), []
    inner = refusing({"json_schema"}, asked)

    def outer(response_format: dict[str, Any] | None) -> str:
        if response_format and response_format["type"] == "json_object":
            forms.send(inner, "Answer", SCHEMA)  # another request finishes while this one is in flight
        return inner(response_format)

    forms.send(outer, "Answer", SCHEMA)
    assert forms.forms == ["json_object", "none"] and forms.used == "json_object"


def test_no_status_means_no_answer_and_no_fallback() -> None:
    forms = SchemaForms()

    def times_out(response_format: dict[str, Any] | None) -> str:
        raise ModelError("no answer") from TimeoutError()

    with pytest.raises(ModelError, match="no answer"):
        forms.send(times_out, "Answer", SCHEMA)
    assert forms.forms == list(SCHEMA_FORMS) and forms.used is None


def test_every_form_refused_raises_the_last_refusal_and_drops_nothing() -> None:
    forms, asked = SchemaForms(), []
    with pytest.raises(ModelError, match="None refused"):
        forms.send(refusing({"json_schema", "json_object", None}, asked), "Answer", SCHEMA)
    assert asked == ["json_schema", "json_object", None] and forms.forms == list(SCHEMA_FORMS)
