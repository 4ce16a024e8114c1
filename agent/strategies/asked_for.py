"""What a question asks for, read from its words and the check's decision alone: the statistic, the words
beyond the names and values it gives, whether the collection's property names name them all, and which
offered collection its words name. `check` decides from these where a verdict would say nothing new, and
asks the model for one elsewhere."""

from __future__ import annotations

import re

from agent._words import close_spelling, content_stems, meets, split_name
from agent.sentence import UNITS
from agent.strategies.naming import mentions
from agent.strategies.wording import DIMENSIONS, WEATHER_MEASURES
from executors.schema import CollectionSchema

#: What the tool computes, as a reader names them ("none": the question lists or groups objects), then
#: common statistics it cannot compute; choosing or naming one of those is a refusal.
SUPPORTED = ("none", "count", "average", "median", "minimum", "maximum", "sum", "most common", "percentage")
UNSUPPORTED = ("standard deviation", "variance", "correlation", "percentile")
#: How people write them, in the model's words or the question's: "std dev", "stdev", "correlated", "quartile".
UNSUPPORTED_WRITTEN = {
    "standard deviation": re.compile(r"\bstandard deviation|\bstd\.? ?dev|\bstdev|\bstddev"),
    "variance": re.compile(r"variance"),
    "correlation": re.compile(r"\bcorrelat"),
    "percentile": re.compile(r"\bpercentile|\bquartile"),
}
STATISTICS = (*SUPPORTED, *UNSUPPORTED)
#: Statistics of the objects themselves: a count, or a listing.
COUNTS = ("none", "count")

#: How people write each statistic, in the order a tie goes (`statistic_written`): the first one written in the
#: question decides ("How many restaurants charge more than the average price?" asks a count).
STATISTIC_WRITTEN: tuple[tuple[str, re.Pattern[str]], ...] = (
    *((name, UNSUPPORTED_WRITTEN[name]) for name in UNSUPPORTED),
    ("percentage", re.compile(r"\bpercent|%|\bproportion\b|\bfraction\b|\bshare of\b|\bwhat share\b|\bratio\b")),
    ("most common", re.compile(r"\bmost (?:common|frequent|popular|usual|typical|often)\b|\bcommonest\b|\bmode\b")),
    ("median", re.compile(r"\bmedian\b")),
    ("count", re.compile(r"\bhow many\b|\b(?:total )?number of\b|\bcount\b")),
    ("average", re.compile(r"\baverage\b|\bmean\b|\bavg\b")),
    ("sum", re.compile(r"\btotal\b|\bsum\b|\bcombined\b|\baltogether\b")),
    (
        "maximum",
        re.compile(
            r"\b(?:highest|maximum|max|largest|biggest|greatest|longest|heaviest|tallest|widest|latest|"
            r"most recent|northernmost|easternmost|top)\b"
        ),
    ),
    (
        "minimum",
        re.compile(
            r"\b(?:lowest|minimum|min|smallest|(?<!at )least|shortest|lightest|narrowest|earliest|cheapest|oldest|"
            r"southernmost|westernmost)\b"
        ),
    ),
)


#: A statistic written as an adverb applies to the whole question, wherever it stands: "How many years have
#: they taught on average?" asks an average, not a count.
ADVERBIAL: tuple[tuple[str, re.Pattern[str]], ...] = (("average", re.compile(r"\bon (?:the )?average\b")),)


def statistic_written(question: str) -> str:
    """The statistic the question's words ask for: one written as an adverb (`ADVERBIAL`), else the first written
    ("none" where it names none: it lists or groups objects; "at least" compares, it asks no minimum). Read from
    the words, not asked of the model: the check's reply wrote it in ~6 generated tokens a question, "none" for
    most questions that name one (`check`)."""
    words = question.lower()
    adverbial = [name for name, pattern in ADVERBIAL if pattern.search(words)]
    if adverbial:
        return adverbial[0]
    written = enumerate(STATISTIC_WRITTEN)
    found = [(m.start(), i, name) for i, (name, pattern) in written if (m := pattern.search(words))]
    return min(found)[2] if found else "none"


#: How the prompt describes `asks_for`. The model sometimes writes this back as its answer (11 decisions
#: on answerable questions in the day's records, none on an unanswerable one): its words say nothing.
ASKS_FOR_HINT = "what it asks for, in a few words"


#: Words of statistics and of asking, not of what is asked about ("average", "how many", "most common").
ASKING_WORDS = frozenset(
    content_stems(
        " ".join(STATISTICS) + " mean number count total amount how many much what which list per each all group "
        "grouped top max min maximum minimum largest smallest highest lowest most least percent none avg num"
    )
)


def asked_words(asks_for: str) -> list[str]:
    """The stems of what the question asks for, without the words of statistics and of asking; none when
    it is the prompt's own hint written back."""
    if asks_for.strip(" .").lower() == ASKS_FOR_HINT:
        return []
    return [w for w in content_stems(split_name(asks_for)) if w not in ASKING_WORDS]


def held_words(collection: CollectionSchema) -> set[str]:
    """The stems of the collection's name, its description, and its properties' names and descriptions."""
    texts = [collection.name, collection.description or ""]
    texts += [f"{p.name} {p.description or ''}" for p in collection.properties]
    return {w for text in texts for w in content_stems(split_name(text))}


#: Where a collection's description stops saying what one object is: "People who died during the 1992 Los
#: Angeles riots: who they were, ...", "Restaurants in the city with their cuisine, ...".
_WHAT_IT_IS = re.compile(r"[:;,.(]|\s(?:with|by)\s")


def what_objects_are(collection: CollectionSchema) -> str:
    """The opening words of the collection's description, which say what its objects are ("" without one)."""
    head = _WHAT_IT_IS.split(collection.description or "", maxsplit=1)[0].strip()
    return head if len(head.split()) <= 12 else ""


#: The shortest word `named_in` reads as a typo of another.
TYPO_LETTERS = 6


def meets_any(stems: list[str], vocabulary: set[str]) -> bool:
    """Whether a stem meets a word of `vocabulary`: a form of it, or a typo of a long one (`typed_for`)."""
    return any(meets(s, k) or typed_for(s, k) for s in stems for k in vocabulary)


def named_in(asks_for: str, collections: list[CollectionSchema]) -> bool:
    """Whether a word of what the question asks for names something in the database: a collection, a
    property or a description (forms of a word meet, "temp" names "temperature"). True when it asks for
    a statistic alone. Asked for a tuition fee, a salary or a phone number no collection has, the model
    still gave the "listed" verdict (7 of the abstention split's 20); over 120 decisions on answerable
    questions, this test found a word of each in its database (2026-11-26)."""
    words = asked_words(asks_for)
    if not words:
        return True
    vocabulary = {w for c in collections for w in held_words(c)}
    return meets_any([*words, *(DIMENSION_STEMS[w] for w in words if w in DIMENSION_STEMS)], vocabulary)


#: What the model writes when it names a property rather than words: one identifier, `market_price_per_bushel`.
IDENTIFIER = re.compile(r"^[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+$|^[a-z]+(?:[A-Z][a-z0-9]*)+$")


def invented_property(asks_for: str, collection: CollectionSchema) -> list[str]:
    """The words of a property the model named that the collection lacks, and that name nothing it holds:
    asked "the market price per bushel of barley", it wrote `market_price_per_bushel` where `yield` is "in
    bushels per acre", and the verdict then said the properties hold it (the public split, 2026-11-29).
    An identifier whose every word the collection's names or descriptions hold (`model_year` of `year`,
    "Model year.") is not invented; none when `asks_for` is words, or a property's own name."""
    said = asks_for.strip(" .")
    if not IDENTIFIER.match(said) or any(p.name.lower() == said.lower() for p in collection.properties):
        return []
    vocabulary = held_words(collection)
    return [
        w
        for w in split_name(said).split()
        if (stems := content_stems(w))
        and not any(s in ASKING_WORDS or s.isdigit() for s in stems)
        and not meets_any(stems, vocabulary)
    ]


def typed_for(word: str, known: str) -> bool:
    """A typo of a word of six letters or more ("airprots" for airports): shorter words are too often
    other words a letter apart ("price", "prime")."""
    return min(len(word), len(known)) >= TYPO_LETTERS and close_spelling(word, known)


def properties_name(asks_for: str, collection: CollectionSchema) -> bool:
    """Whether every word of what the question asks for (statistic words aside) is a word of one of the
    collection's property names ("ticket price" of `ticketPrice`): the verdict on its properties is then
    foregone. On the committed sample's 90 answerable questions (2026-11-26), the verdict was "listed"
    for all 49 whose words a property names, and no unanswerable question's words were all property
    names but three the statistic they ask for had refused already."""
    words = asked_words(asks_for)
    names = {w for p in collection.properties for w in content_stems(split_name(p.name))}
    return bool(words) and all(any(meets(word, name) for name in names) for word in words)


#: The stem of a word of size, heat, wet or wind -> the stem of the measure it names ("heaviest" -> weight).
#: Words of age, the measure they compare ("victims younger than 16": `age`; refused as naming nothing held,
#: the unseen split's fresh tables, 2026-12-03). Only where the check reads what is asked, not as a condition.
AGES = dict.fromkeys(("young", "younger", "youngest", "old", "older", "oldest", "aged"), "age")
DIMENSION_STEMS = {
    content_stems(word)[0]: content_stems(measure)[0]
    for word, measure in {**DIMENSIONS, **WEATHER_MEASURES, **AGES}.items()
}
#: Words that join, point, compare or ask, never what a property holds (the stopword list keeps them).
#: The comparisons: "riot deaths with latitude above 34.0" asks for latitude, and "above" was read as a
#: word no property names (4 of 24 questions on an unseen collection refused, 2026-11-28). A follow-up
#: points: "how many of those were completed" asks for `completed`, and "those" sent it to the verdict.
FUNCTION_WORDS = frozenset(
    content_stems(
        "from than any all each every do does did have has had get gets got out over under about across "
        "whose who whom where when there here its it's one ones some "
        "above below more less greater fewer higher lower exceeds exceeding least between before after since "
        "those these this that them they were was"
    )
)
#: A capitalized word inside a sentence: a name the question gives ("airports in Texas"), a value.
NAME = re.compile(r"(?<=[\w,;:'’)] )[A-Z][\w'’&.-]*")


def beyond_names(
    asks_for: str, question: str, collection: CollectionSchema, values: dict[str, list[str]] | None = None
) -> list[str]:
    """The words of what the question asks for that are neither names nor numbers it gives (capitalized
    inside it: a value, "Texas"; "34.0"), nor stored `values` it names ("snow", a `weather`), nor the
    collection's own name ("airports"): what a property would have to hold. A word of size stands for
    the measure it names ("heaviest" for weight)."""
    names = {w for m in NAME.finditer(question) for w in content_stems(m.group())}
    names |= {w for _, _, start, end in mentions(question, values or {}) for w in content_stems(question[start:end])}
    objects = content_stems(split_name(collection.name))
    sized = {w for w in content_stems(asks_for) if w in DIMENSION_STEMS}
    words = [DIMENSION_STEMS.get(w, w) for w in asked_words(asks_for) if w not in names and w not in FUNCTION_WORDS]
    return [w for w in words if not w.isdigit() and (not any(meets(w, o) for o in objects) or w in sized)]


def named_by_properties(
    asks_for: str, question: str, collection: CollectionSchema, values: dict[str, list[str]] | None = None
) -> bool:
    """Whether what the question asks for, past the names and stored values it gives and the collection's
    own name, is all words of the collection's property names ("the heaviest car from Japan in lbs":
    weight, lbs; "the average maximum temperature of snow": temp_max, `snow` a stored `weather`)."""
    words = beyond_names(asks_for, question, collection, values)
    return bool(words) and _properties_name(words, collection)


def all_named(question: str, collection: CollectionSchema, values: dict[str, list[str]]) -> bool:
    """Whether every word of the question, past the names, stored `values` and collection name it gives, is
    a word of a property name (or none is left): nothing in it the collection may not hold."""
    return _properties_name(beyond_names(question, question, collection, values), collection)


def _properties_name(words: list[str], collection: CollectionSchema) -> bool:
    """Whether each of `words` is a word of one of the collection's property names."""
    names = _property_words(collection)
    return all(any(meets(word, name) for name in names) for word in words)


def spelled_by_properties(asks_for: str, question: str, collection: CollectionSchema) -> bool:
    """Whether any word of what the question asks for, past the names it gives, is a word of a property name:
    then the words, not their meaning, are what the verdict weighs ("cozy seats": `seats`, and "cozy")."""
    words = beyond_names(asks_for, question, collection)
    return any(meets(word, name) for word in words for name in _property_words(collection))


def _property_words(collection: CollectionSchema) -> set[str]:
    return {w for p in collection.properties for w in content_stems(split_name(p.name))}


#: The words a count is of: "how many foggy days ...", "how many Latino or Asian victims ..." (three words cut
#: the counted noun off two values joined by "or": refused, the unseen split's first run, 2026-12-03).
_COUNTED = re.compile(r"\bhow many\s+((?:[\w'-]+\s*){1,4})", re.I)


def counts_named_values(
    asks_for: str, question: str, collection: CollectionSchema, values: dict[str, list[str]]
) -> bool:
    """Whether the question counts objects by stored values it names, and asks nothing else than they and
    the property names hold: "How many days had snow?" (`weather = "snow"`; "days" the objects counted).
    The verdict refused it, and "How many foggy days were there in 2015?" (2 of 16 questions on a table
    never seen, 2026-11-29). A count that names no stored value ("How many tornadoes were there?") is left
    to the verdict."""
    counted = _COUNTED.search(question)
    if not mentions(question, values) or counted is None:
        return False
    objects = set(content_stems(counted.group(1)))
    beyond = [w for w in beyond_names(asks_for, question, collection, values) if w not in objects]
    rest = [w for w in beyond if not any(meets(w, name) for name in _property_words(collection))]
    return bool(asked_words(asks_for)) and not rest


def word_links(question: str, collection: CollectionSchema) -> int:
    """How many of the question's words (asking words aside) name the collection or one of its properties."""
    names = {
        w
        for text in (collection.name, *(p.name for p in collection.properties))
        for w in content_stems(split_name(text))
    }
    asked = {w for w in content_stems(question) if w not in ASKING_WORDS}
    return sum(any(meets(word, name) for name in names) for word in asked)


def linked_collection(question: str, shown: list[CollectionSchema], chosen: CollectionSchema) -> CollectionSchema:
    """The one collection the question's words name, where they name none of the model's choice: asked
    "What is the average latitude for each race?" beside RiotDeaths (`latitude`, `race`), the model chose
    Penguins, and the call grouped Penguins by `race` three times (2 of 24 questions, 2026-11-28). The
    model's choice stands where its words name it, or no one collection is named most."""
    links = {c.name: word_links(question, c) for c in shown}
    best = max(links.values())
    named = [c for c in shown if links[c.name] == best]
    return named[0] if links[chosen.name] == 0 and best and len(named) == 1 else chosen


def asking_alone(asks_for: str) -> bool:
    """Whether what the model says is asked is words of asking and statistics alone ("how many", "count"):
    the objects themselves, nothing a property must hold. Over the 181 questions of the public split
    (2026-11-28), 14 decisions said so: on 12 answerable questions, each verdict "yes"; on 2 unanswerable
    ones, a statistic the check refuses before (variance, correlation). The part "how many does California
    have?" of a two-part question got "no". The hint's own words, or "none" (a choice of the statistic's),
    say nothing of what is asked: written for 7 of the conversation split's 55 follow-ups and 2 of the main
    job's 15 questions (2026-11-30), they are no sign that only the objects are asked."""
    return bool(content_stems(asks_for)) and not said_nothing(asks_for) and not asked_words(asks_for)


def said_nothing(asks_for: str) -> bool:
    """What the model wrote as asked is words of the prompt copied: the hint, or the statistic's "none"."""
    return asks_for.strip(" .").lower() in (ASKS_FOR_HINT, "none")


def written_in(asks_for: str, question: str) -> bool:
    """Whether what the model says the question asks for is the question's own words (a word of size
    for its measure): "yield_bushels" for "How much rain fell?" is the model's own mapping onto a
    property, and no sign that the property holds what is asked. A unit the property's name ends in need not
    be written ("the shortest average wait": `averageWaitMinutes`)."""
    said = content_stems(question)
    measures = {DIMENSION_STEMS[w] for w in said if w in DIMENSION_STEMS}
    named = split_name(asks_for).lower().split()
    unit = content_stems(named[-1]) if len(named) > 1 and named[-1] in UNITS else []
    return all(
        w in measures or any(meets(w, x) for x in said)
        for w in asked_words(asks_for)
        if w not in FUNCTION_WORDS and w not in unit
    )


#: Words whose opposite a property may hold instead: asked for one, a property of the other does not answer.
OPPOSITES = {
    **dict.fromkeys(("opening",), "closing"),
    **dict.fromkeys(("closing",), "opening"),
    **dict.fromkeys(("arrival", "arrivals"), "departure"),
    **dict.fromkeys(("departure", "departures"), "arrival"),
    **dict.fromkeys(("inbound",), "outbound"),
    **dict.fromkeys(("outbound",), "inbound"),
    **dict.fromkeys(("import", "imports"), "export"),
    **dict.fromkeys(("export", "exports"), "import"),
    **dict.fromkeys(("birth",), "death"),
    **dict.fromkeys(("death",), "birth"),
    **dict.fromkeys(("buying",), "selling"),
    **dict.fromkeys(("selling",), "buying"),
}


def opposite_held(question: str, collection: CollectionSchema) -> tuple[str, str] | None:
    """A word of the question whose opposite the collection's names or descriptions hold, and never the word
    itself: "What was IBM's opening price in June 2004?" where `price` is the "Closing price in US dollars."
    (the public split, 2026-11-29: the check let it through and the answer was a month's close). The word and
    its opposite, or None."""
    texts = [collection.name, collection.description or ""]
    texts += [f"{split_name(p.name)} {p.description or ''}" for p in collection.properties]
    held = set(re.findall(r"[a-z]+", " ".join(texts).lower()))
    for word in re.findall(r"[a-z]+", question.lower()):
        other = OPPOSITES.get(word)
        if other is not None and other in held and word not in held and word.rstrip("s") not in held:
            return word, other
    return None
