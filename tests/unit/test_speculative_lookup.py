"""The prompt-lookup draft of `dbgorilla._speculative` (pure: no model; the model tier checks the decoding)."""

from __future__ import annotations

from dbgorilla import _speculative


def test_the_draft_is_what_followed_the_latest_occurrence_of_the_last_tokens() -> None:
    lookup = _speculative.RecentLookup(tokens=3, ngram=3, min_ngram=2)
    assert list(lookup([1, 2, 9, 9, 1, 2, 7, 8, 5, 1, 2])) == [7, 8, 5]  # the latest "1 2", not the first
    assert list(lookup([4, 5, 6, 1, 2, 3, 4, 5])) == [6, 1, 2]
    assert list(lookup([1, 2, 3, 4])) == []  # no earlier occurrence of a 2-gram: nothing drafted
    assert list(lookup([7])) == []
