"""`parse_scope`: how a caller writes scoping filters on a command line."""

from __future__ import annotations

import pytest

from executors import ScopeError
from executors.scope import parse_scope


def test_each_item_becomes_a_filter_of_its_collection() -> None:
    scope = parse_scope(["Restaurants.city=Lisbon", "Reservations.partySize<=4", "Restaurants.name LIKE Me*"])
    assert scope is not None
    assert {name: [(f.property_name, f.operator, f.value) for f in items] for name, items in scope.filters.items()} == {
        "Restaurants": [("city", "=", "Lisbon"), ("name", "LIKE", "Me*")],
        "Reservations": [("partySize", "<=", "4")],
    }


def test_no_items_is_no_scope() -> None:
    assert parse_scope([]) is None


@pytest.mark.parametrize("item", ["Restaurants.city", "city=Lisbon", "Restaurants.city=", ".city=Lisbon"])
def test_items_that_cannot_be_read_say_how_to_write_them(item: str) -> None:
    with pytest.raises(ScopeError, match="scope"):
        parse_scope([item])
