"""The prompt-lookup draft of `dbgorilla.llm_server.speculative` (pure: no model; the model tier checks the decoding)."""

from __future__ import annotations

from typing import Any

import pytest

from dbgorilla.llm_server import speculative as _speculative


def test_the_draft_is_what_followed_the_latest_occurrence_of_the_last_tokens() -> None:
    lookup = _speculative.RecentLookup(tokens=3, ngram=3, min_ngram=2)
    assert list(lookup([1, 2, 9, 9, 1, 2, 7, 8, 5, 1, 2])) == [7, 8, 5]  # the latest "1 2", not the first
    assert list(lookup([4, 5, 6, 1, 2, 3, 4, 5])) == [6, 1, 2]
    assert list(lookup([1, 2, 3, 4])) == []  # no earlier occurrence of a 2-gram: nothing drafted
    assert list(lookup([7])) == []


def test_the_last_replies_are_looked_up_before_the_prompt_and_no_draft_spans_two() -> None:
    lookup = _speculative.RecentLookup(tokens=4, ngram=2, min_ngram=2, replies=2, misses=0)  # calls of no one reply
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
    from dbgorilla.llm_server.speculative import drafting_argv

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
    from dbgorilla.llm_server.speculative import drafting

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
    lookup, rest = drafting(["--draft_tokens=3", "--draft_opening=0", "--port", "1"])
    assert lookup is not None and lookup.opening_tokens == 0 and rest == ["--port", "1", "--logits_all=False"]
    assert drafting(["--draft_tokens=3"])[0] == _speculative.RecentLookup(tokens=3)  # 16 opening tokens
    with pytest.raises(SystemExit, match="a whole number of tokens"):
        drafting(["--draft_tokens=3", "--draft_opening=all"])


def test_a_reply_opens_as_the_two_latest_replies_to_the_likest_prompts_opened_alike() -> None:
    lookup = _speculative.RecentLookup(tokens=3)
    assert list(lookup.opening([1, 2, 3])) == []  # no reply yet
    lookup.answer([1, 2, 3, 4], [60, 61, 62, 63, 64, 65])  # a check, say
    assert list(lookup.opening([1, 2, 3, 9])) == [60, 61, 62]  # one such reply: its first `tokens`
    lookup.answer([1, 2, 7, 7, 7], [60, 61, 70, 71])
    lookup.answer([1, 5, 5], [80, 81, 82, 83, 84])  # another kind of prompt, answered last
    lookup.answer([1, 2, 3, 5], [60, 61, 62, 63, 90, 91])
    # the prompts sharing most with this one are the first and the last: their replies part after 4 tokens
    assert list(lookup.opening([1, 2, 3, 8])) == [60, 61, 62, 63]
    assert list(lookup.opening([1, 5, 5, 5])) == [80, 81, 82]  # the likest prompt is the other kind's
    assert list(lookup.opening([2, 2])) == []  # no prompt shares a token with it
    lookup.answer([1, 2, 3, 6], [60, 99])  # a reply that parts at its second token
    assert list(lookup.opening([1, 2, 3, 8])) == [60]  # the two latest only
    lookup.answer([1, 2, 3, 4], [7])  # a warming's one token: no opening to learn from
    assert len(lookup.answered) == 5
    lookup.opening_tokens = 1
    assert list(lookup.opening([1, 5, 5, 5])) == [80]
    lookup.opening_tokens = 0
    assert list(lookup.opening([1, 2, 3, 8])) == []


def test_only_the_last_replies_are_kept_for_openings() -> None:
    lookup = _speculative.RecentLookup(replies=2)
    for reply in ([10, 11], [20, 21], [30, 31]):
        lookup.answer([1, 2], reply)
    assert [list(reply) for _, reply in lookup.answered] == [[20, 21], [30, 31]]
    assert list(lookup.opening([1, 2])) == []  # the two latest part at their first token: nothing to draft


def test_after_drafts_thrown_away_a_reply_drafts_only_after_longer_suffixes_found_again() -> None:
    lookup = _speculative.RecentLookup(tokens=2, misses=2, after=2)
    context = [5, 8, 9, 6, 7, 1]  # "5" and "6" each came once before, "6 5" and "5 1" never
    lookup.begin()
    assert list(lookup([*context, 5])) == [8, 9]  # a one-token suffix drafts
    assert list(lookup([*context, 5, 6])) == [7, 1]  # the loop asks again one token on: nothing was kept
    assert list(lookup([*context, 5, 6, 5])) == []  # two thrown away: "5" came before, but alone it no longer drafts
    assert list(lookup([*context, 5, 6, 5, 1])) == []
    assert list(lookup([*context, 5, 6, 5, 1, 5, 6])) == [5, 1]  # "5 6" came before: two tokens still draft
    assert list(lookup([*context, 5, 6, 5, 1, 5, 6, 5, 1, 9])) == [6, 7]  # both kept (and one sampled): "9" drafts
    assert list(lookup([*context, 5, 6, 5, 1, 5, 6, 5, 1, 9, 8])) == [9, 6]  # one thrown away is not two
    lookup.begin()  # a new reply starts with one-token suffixes allowed
    assert list(lookup([*context, 5])) == [8, 9]
    never = _speculative.RecentLookup(tokens=2, misses=0)
    assert [list(never([*context, 5, 6, 5, 1][:size])) for size in range(7, 11)] == [[8, 9], [7, 1], [6, 5], [5, 6]]


def test_the_misses_option_is_whole_numbers() -> None:
    lookup, _ = _speculative.drafting(["--draft_tokens=3", "--draft_misses=0"])
    assert lookup is not None and lookup.misses == 0
    lookup, _ = _speculative.drafting(["--draft_tokens=3", "--draft_misses=2:3"])
    assert lookup is not None and (lookup.misses, lookup.after) == (2, 3)
    for wrong in ("two", "1:", "1:0", "1:x"):
        with pytest.raises(SystemExit, match=f"--draft_misses={wrong}: expected whole numbers"):
            _speculative.drafting(["--draft_tokens=3", f"--draft_misses={wrong}"])


def test_by_default_one_draft_thrown_away_leaves_only_four_token_suffixes() -> None:
    lookup = _speculative.RecentLookup(tokens=2)
    lookup.begin()
    context = [1, 2, 3, 4, 5, 6, 7, 9, 4, 5]
    assert list(lookup(context)) == [6, 7]  # "4 5" came before
    assert list(lookup([*context, 8])) == []  # thrown away ("8" came never anyway)
    assert list(lookup([*context, 8, 2])) == []  # "2" came before, but alone it drafts no more
    assert list(lookup([*context, 8, 2, 1, 2, 3, 4])) == [5, 6]  # "1 2 3 4" did
    assert list(_speculative.RecentLookup(tokens=2)([*context, 8, 2])) == [3, 4]  # a reply with no misses
