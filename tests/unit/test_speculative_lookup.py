"""The prompt-lookup draft of `dbgorilla._speculative` (pure: no model; the model tier checks the decoding)."""

from __future__ import annotations

from typing import Any

import pytest

from dbgorilla import _speculative


def test_the_draft_is_what_followed_the_latest_occurrence_of_the_last_tokens() -> None:
    lookup = _speculative.RecentLookup(tokens=3, ngram=3, min_ngram=2)
    assert list(lookup([1, 2, 9, 9, 1, 2, 7, 8, 5, 1, 2])) == [7, 8, 5]  # the latest "1 2", not the first
    assert list(lookup([4, 5, 6, 1, 2, 3, 4, 5])) == [6, 1, 2]
    assert list(lookup([1, 2, 3, 4])) == []  # no earlier occurrence of a 2-gram: nothing drafted
    assert list(lookup([7])) == []


def test_the_last_replies_are_looked_up_before_the_prompt_and_no_draft_spans_two() -> None:
    lookup = _speculative.RecentLookup(tokens=4, ngram=2, min_ngram=2, replies=2)
    lookup.remember([50, 51, 52, 10, 11, 12, 13])  # the template's last 3 tokens, then a reply
    assert list(lookup([1, 2, 51, 52, 10])) == [11, 12, 13]  # a reply's opening: drafted, cut at its end
    assert list(lookup([7, 11, 12, 3, 11, 12])) == [3, 11, 12]  # the prompt's own occurrence is the latest
    lookup.remember([50, 51, 52, 20, 21])
    lookup.remember([50, 51, 52, 30, 31])  # a third reply: the first is forgotten
    assert len(lookup.history) == 2
    assert list(lookup([9, 10, 11])) == []
    assert list(lookup([9, 51, 52])) == [30, 31]  # the latest reply's opening
    lookup.remember([1, 2, 3])  # the template's tokens alone, no reply: nothing kept
    assert len(lookup.history) == 2


def test_a_drafting_server_keeps_the_last_logits_alone_unless_asked_otherwise(capsys: Any) -> None:
    from dbgorilla._speculative import drafting_argv

    assert drafting_argv(["--model", "m"]) == ["--model", "m", "--logits_all=False"]
    assert drafting_argv(["--logits_all=False"]) == ["--logits_all=False"]
    assert drafting_argv(["--logits_all", "false"]) == ["--logits_all", "false"]
    assert capsys.readouterr().err == ""
    assert drafting_argv(["--logits_all=True"]) == ["--logits_all=True"]
    assert "no draft is checked" in capsys.readouterr().err
    assert drafting_argv(["--logits_all", "True", "--port", "1"]) == ["--logits_all", "True", "--port", "1"]
    assert "--logits_all=True keeps" in capsys.readouterr().err


def test_one_token_before_is_enough_to_draft_by_default() -> None:
    lookup = _speculative.RecentLookup(tokens=2)
    assert list(lookup([5, 8, 9, 7, 5])) == [8, 9]  # "7 5" never came before; "5" did
    assert list(_speculative.RecentLookup(tokens=2, min_ngram=2)([5, 8, 9, 7, 5])) == []
    assert list(lookup([2, 3, 4, 9, 1, 5, 4, 8, 8, 3, 4])) == [9, 1]  # "3 4" before the latest "4"


def test_the_draft_options_are_read_and_taken_out_of_the_server_arguments() -> None:
    from dbgorilla._speculative import drafting

    lookup, rest = drafting(["--draft_tokens=3", "--model", "m"])
    assert lookup is not None and (lookup.tokens, lookup.min_ngram, lookup.ngram) == (3, 1, 4)
    assert rest == ["--model", "m", "--logits_all=False"]
    lookup, rest = drafting(["--draft_ngram=2:3", "--draft_tokens=5"])
    assert lookup is not None and (lookup.tokens, lookup.min_ngram, lookup.ngram) == (5, 2, 3)
    assert drafting(["--draft_tokens=0", "--draft_ngram=2:3", "--port", "1"]) == (None, ["--port", "1"])
    assert drafting(["--port", "1"]) == (None, ["--port", "1"])
    with pytest.raises(SystemExit, match="the shortest suffix, then the longest"):
        drafting(["--draft_tokens=3", "--draft_ngram=3:2"])
    with pytest.raises(SystemExit, match="the shortest suffix, then the longest"):
        drafting(["--draft_tokens=3", "--draft_ngram=one:four"])
