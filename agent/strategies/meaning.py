"""A property named by meaning, not spelling: "gas mileage" is `miles_per_gallon`, "powerful" is
`horsepower`, "weigh" is `body_mass_g`.

The check links what a question asks for to property names by their words (`asked_for`), and refused
what no word named: "What's the worst gas mileage of any Honda?" and "Which is more powerful on average,
a European car or a Japanese car?" on a table of cars (the public split, 2026-11-29). Here the embedder
the stack already runs (`llm.encoder`, all-MiniLM-L6-v2, in process) ranks the collection's property
names against those words, the words of asking and statistics and the collection's own name left out. A
property is named when it is the clear nearest: cosine similarity of at least `MIN_SIMILARITY`, ahead of
the next property by `MIN_MARGIN`.

Names are compared without the unit their last word carries ("price" of `price_usd`: "cost" is 0.73
to it, 0.48 to "price usd"). The two bounds come from phrases on five tables' property names
(2026-11-29, before any run): the answerable "gas mileage" 0.56, "weigh" 0.59-0.91, "powerful" 0.56,
"gender" 0.56, "rainfall" 0.83, "wind speed" 0.81 lead by 0.14 or more; of what the tables cannot
answer, "age" (penguins: `year`, 0.51) came nearest, then "humidity" (0.53, led by 0.03), "passengers"
(0.45), "top speed" (0.42). Missed: "fuel efficiency" (0.49), "beak length" (two lengths at 0.46 and 0.43).
Linked wrongly on the public split: "airlines" to `iata` (0.67), an acronym whose meaning the encoder knows;
"Which airlines fly out of the Atlanta airport?" was refused before. Where the model files are not installed
(`dbgorilla setup models`), nothing is linked by meaning and the words alone decide.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from agent._words import content_stems, meets, split_name
from agent.sentence import unit_of
from agent.strategies.asked_for import ASKING_WORDS, FUNCTION_WORDS, NAME
from executors.schema import CollectionSchema
from llm.encoder import EncoderMissing, MiniLMEncoder

#: The least similarity of the phrase and the nearest property name.
MIN_SIMILARITY = 0.53
#: How far the nearest property leads the next.
MIN_MARGIN = 0.1


@functools.cache
def _encoder() -> Any | None:
    """The sentence encoder, loaded once per process; None where its model files are not installed."""
    try:
        return MiniLMEncoder(threads=1)
    except (ImportError, OSError, EncoderMissing):
        return None


def named(prop: str) -> str:
    """A property's name as words, without the unit its last word carries: "price" of `price_usd`,
    "weight" of `weight_in_lbs` (a unit pulls a name's vector away from the word people ask with)."""
    words = split_name(prop).lower().split()
    if unit_of(prop) and len(words) > 1:
        words = words[:-1]
        if len(words) > 1 and words[-1] in ("in", "per"):
            words = words[:-1]
    return " ".join(words)


@functools.lru_cache(maxsize=256)
def _names(names: tuple[str, ...]) -> Any:
    encoder = _encoder()
    return encoder.encode([named(n) for n in names]) if encoder is not None else None


def phrase_of(asks_for: str, question: str, collection: CollectionSchema) -> str:
    """What the question asks for, without words of asking, statistics and joining, the names the question
    gives (capitalized: a value, "Honda") and the collection's own name: "worst gas mileage" of "the worst
    gas mileage of any Honda car"."""
    skipped = ASKING_WORDS | FUNCTION_WORDS | {w for m in NAME.finditer(question) for w in content_stems(m.group())}
    objects = content_stems(split_name(collection.name))
    kept = []
    for word in split_name(asks_for).split():
        stems = content_stems(word)
        if stems and not any(s in skipped or any(meets(s, o) for o in objects) for s in stems):
            kept.append(word.lower())
    return " ".join(kept)


def meant_property(asks_for: str, question: str, collection: CollectionSchema) -> str | None:
    """The one property of `collection` that what the question asks for names by meaning, or None."""
    phrase = phrase_of(asks_for, question, collection)
    names = tuple(p.name for p in collection.properties)
    if not phrase or len(names) < 2:
        return None
    encoder, vectors = _encoder(), _names(names)
    if encoder is None or vectors is None:
        return None
    similarity = vectors @ encoder.encode([phrase])[0]
    second, best = np.argsort(similarity)[-2:]
    if similarity[best] >= MIN_SIMILARITY and similarity[best] - similarity[second] >= MIN_MARGIN:
        return names[int(best)]
    return None


#: How near a question's word must be to the stored value it names by meaning, and how far ahead of the
#: property's next value: "women" is 0.69 to `Female`, 0.48 to `Male`; "men" 0.67 and 0.45. Below them on
#: the day's probe (2026-12-03, before any run with it): "killed" 0.70 to `Death` but 0.59 to `Homicide`,
#: "freezing" 0.61 to `snow`, "ladies" 0.67 ahead by 0.16, "caucasian" nearer `Asian` than `White`.
VALUE_SIMILARITY = 0.65
VALUE_MARGIN = 0.2


@functools.lru_cache(maxsize=256)
def _values(values: tuple[str, ...]) -> Any:
    encoder = _encoder()
    return encoder.encode([v.lower() for v in values]) if encoder is not None else None


def means_value(words: list[str], value: str, stored: list[str]) -> bool:
    """Whether one of `words` (a question's, measures left out by the caller) names the stored `value` by
    meaning: nearest to it of the property's `stored` values, near enough and clearly ahead of the next
    ("women" `Female`, "men" `Male`). A condition the model wrote with that value is then no invention."""
    kept = [w.lower() for w in words if len(w) >= 3]
    if value not in stored or len(stored) < 2 or not kept:
        return False
    encoder, vectors = _encoder(), _values(tuple(stored))
    if encoder is None or vectors is None:
        return False
    at = stored.index(value)
    for similarity in encoder.encode(kept) @ vectors.T:
        second, best = np.argsort(similarity)[-2:]
        ahead = similarity[best] - similarity[second]
        if best == at and similarity[best] >= VALUE_SIMILARITY and ahead >= VALUE_MARGIN:
            return True
    return False
