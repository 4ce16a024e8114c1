"""The sentence a person reads, written from the committed answer and the call it came from.

"From the query result: 48.8338235294." says a number and nothing about it. A person reads what was
computed, over which objects, with the number rounded as a person rounds it and the property's unit
where its name carries one: "The mean bill length (mm) of the 68 penguins with species = "Chinstrap"
is 48.83." The sentence is written from the committed answer (so the two never disagree) and the
call's own arguments and result (so it names nothing the agent did not receive). Names are listed
only where the answer commits them.

An aggregation over no objects is not a number: its mean, maximum or top value does not exist, nor is
a group of them to name. `empty_result` says so ("no objects matched (filter country = "USA")"); a count
of 0 is a count.
"""

from __future__ import annotations

import math
from typing import Any

from agent._words import split_name
from agent.answer import FinalAnswer
from executors import QueryResult
from executors.vocabulary import (
    AGGREGATION_FIELDS,
    CONDITIONS_FIELD,
    FILTER_FIELDS,
    GROUPBY_FIELD,
    MATCH_FIELD,
    METRIC_WORDS,
    PERCENT_METRICS,
    SEARCH_FIELD,
    SORT_FIELD,
    STATISTIC_METRICS,
    BooleanMetric,
    NumberMetric,
    TextMetric,
)

#: Metrics that count: over no objects they are 0, truly.
COUNTING = STATISTIC_METRICS["count"]
TOP = TextMetric.TOP_OCCURRENCES.value
COUNT_METRIC = NumberMetric.COUNT.value
SHARES = PERCENT_METRICS
TALLIES = {BooleanMetric.TOTAL_TRUE.value, BooleanMetric.TOTAL_FALSE.value}
#: A property name's last word that is a unit ("body_mass_g", "price_usd", "weight_in_lbs").
UNITS = {
    "mm": "mm",
    "cm": "cm",
    "m": "m",
    "km": "km",
    "g": "g",
    "kg": "kg",
    "lb": "lb",
    "lbs": "lbs",
    "usd": "USD",
    "eur": "EUR",
    "mph": "mph",
    "kmh": "km/h",
    "pct": "%",
    "percent": "%",
    "min": "min",
    "minutes": "min",
    "hours": "h",
    "years": "years",
    "bushels": "bushels",
}


def rounded(value: float) -> str:
    """A number as a person writes it: whole numbers whole, else two decimals (three significant
    digits below 1), thousands with commas."""
    if not math.isfinite(value):
        return str(value)
    if float(value).is_integer() and abs(value) < 1e15:
        return f"{int(value):,}"
    if abs(value) < 1:
        return f"{value:.3g}"
    return f"{value:,.2f}"


def unit_of(prop: str) -> str:
    """The unit a property's name carries ("" when none)."""
    words = prop.replace("-", "_").lower().split("_")
    return UNITS.get(words[-1], "") if len(words) > 1 else ""


def _words(name: str) -> str:
    return split_name(name).lower()


def _written(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    return f'"{value}"' if isinstance(value, str) else str(value)


def condition_text(where: dict[str, Any]) -> str:
    operator = where.get("operator", "=")
    if operator == "between":
        return f"{where['property_name']} between {_written(where.get('value'))} and {_written(where.get('value_to'))}"
    return f"{where['property_name']} {operator} {_written(where.get('value'))}"


def _filters(arguments: dict[str, Any]) -> list[str]:
    """The call's filters, in words: each slot's, then the `conditions` (joined by "or" under `match: any`)."""
    shown = [
        condition_text(where)
        for slot in FILTER_FIELDS
        if isinstance(where := arguments.get(slot), dict) and where.get("property_name")
    ]
    conditions = [condition_text(c) for c in arguments.get(CONDITIONS_FIELD) or [] if isinstance(c, dict)]
    if conditions and arguments.get(MATCH_FIELD) == "any":
        conditions = [f"({' or '.join(conditions)})" if len(conditions) > 1 else conditions[0]]
    shown += [c for c in conditions if c not in shown]  # a slot's filter written again as a condition, once
    if arguments.get(SEARCH_FIELD):
        shown.append(f'matching "{arguments[SEARCH_FIELD]}"')
    return shown


def scope_of(arguments: dict[str, Any]) -> str:
    """What a call ran over, in words: "with origin = "Japan" and cylinders > 4" ("" for everything), and
    where a sort keeps its first objects, "with the highest weight in lbs" ("the 5 cars with ...")."""
    shown = _filters(arguments)
    sort = arguments.get(SORT_FIELD)
    if isinstance(sort, dict) and sort.get("property_name"):
        way = "highest" if sort.get("order") == "descending" else "lowest"
        unit, named = _unit_apart(str(sort["property_name"]))
        shown.append(f"the {way} {named}" + (f" ({unit})" if unit else ""))
    return f" with {' and '.join(shown)}" if shown else ""


def empty_result(arguments: dict[str, Any], result: QueryResult) -> str | None:
    """Why a result holds no answer: an aggregation (not a count) over no objects, or groups of none (no group
    to name: "Which model year has the most cars?" grouped a filter nothing matched and answered 0). None
    otherwise."""
    if result.total_count != 0 or result.groups:
        return None
    metrics = {m for values in result.aggregations.values() for m in values}
    if (not metrics or metrics <= COUNTING) and not arguments.get(GROUPBY_FIELD):
        return None
    shown = _filters(arguments)
    return f"no objects matched ({'filter ' + ' and '.join(shown) if shown else 'the collection is empty'})"


def _aggregation(arguments: dict[str, Any]) -> tuple[str, str, int]:
    for slot in AGGREGATION_FIELDS:
        asked = arguments.get(slot)
        if isinstance(asked, dict) and asked.get("property_name"):
            limit = int(asked.get("top_occurrences_limit") or 1)
            return str(asked["property_name"]), str(asked.get("metrics") or ""), limit
    return "", "", 0


def measure(prop: str, metric: str) -> str:
    """ "average bill length (mm)"; a property named for its statistic keeps its own word ("average rating")."""
    unit, shown = _unit_apart(prop)
    word = METRIC_WORDS.get(metric, metric.lower())
    named = shown if shown.split(" ")[0] in (word, "mean", "avg") and metric == NumberMetric.MEAN.value else ""
    return (named or f"{word} {shown}") + (f" ({unit})" if unit else "")


def _unit_apart(prop: str) -> tuple[str, str]:
    """The property's unit and its name in words without it: ("g", "body mass"); ("lbs", "weight") of
    `weight_in_lbs`, not "weight in"."""
    unit = unit_of(prop)
    shown = _words(prop)
    last = prop.replace("-", "_").lower().split("_")[-1]
    if unit and shown.endswith(" " + last):
        shown = shown[: -len(last) - 1].removesuffix(" in").removesuffix(" per")
    return unit, shown


def singular(things: str) -> str:
    """The phrase with its last word singular, in any case: "airport" of "airports", "city" of "cities",
    "stock price", "visit type" of "visit types" (one object in a sentence, one group in `chain`'s parts)."""
    head, _, last = things.rpartition(" ")
    lowered = last.lower()
    if lowered.endswith("ies") and len(last) > 4:
        last = last[:-3] + "y"
    elif lowered.endswith(("sses", "shes", "ches", "xes")):
        last = last[:-2]
    elif lowered.endswith("s") and not lowered.endswith("ss"):
        last = last[:-1]
    return f"{head} {last}" if head else last


def sentence(answer: FinalAnswer, arguments: dict[str, Any], result: QueryResult, form: str = "") -> str:
    """The committed answer of one call as a sentence about that call (`form`: the rule of `answer_form`
    that shaped it, "distinct" for the number of groups)."""
    if answer.refuses:
        return f"I cannot answer that: {answer.cannot_answer.strip()}."
    things = _words(str(arguments.get("collection_name") or "objects"))
    over = f"{things}{scope_of(arguments)}"
    one = f"{singular(things)}{scope_of(arguments)}"  # "There is 1 airport with ..."
    prop, metric, limit = _aggregation(arguments)
    count = result.total_count
    counted = f"the {rounded(count)} {one if count == 1 else over}" if count is not None else f"the {over}"
    group_by = arguments.get(GROUPBY_FIELD)
    if answer.groups:
        values = "; ".join(f"{name}: {rounded(value)}" for name, value in answer.groups.items())
        by = f" by {_words(str(group_by))}" if group_by else ""
        if not prop or metric == TOP:
            return f"The number of {over}{by} is {values}."
        return f"The {measure(prop, metric)} of {over}{by} is {values}."
    if answer.group_names:
        held = next((name for group in (result.groups or {}).values() for name in group.aggregations), prop)
        common = "most common" if limit <= 1 else f"{limit} most common"
        by = f" by {_words(str(group_by))}" if group_by else ""
        return f"The {common} {_words(held)} of {over}{by}: {_per_group_names(answer, result)}."
    if form == "distinct" and group_by and result.groups and answer.numbers == [float(len(result.groups))]:
        return f"The {over} have {len(result.groups)} different values of {_words(str(group_by))}."
    per_group = _group_values(result)
    if group_by and per_group and (answer.names or answer.numbers) and not answer.groups:
        return _one_group(answer, per_group, measure(prop, metric) if prop else f"number of {things}", over, group_by)
    if metric == TOP and answer.names:
        common = "most common" if limit <= 1 else f"{len(answer.names)} most common"
        verb = "is" if len(answer.names) == 1 else "are"
        return f"The {common} {_words(prop)} among {counted} {verb} {', '.join(answer.names)}."
    if metric == COUNT_METRIC and len(answer.numbers) == 1 and not answer.names:  # a count of values: of objects
        if count is None or answer.numbers[0] == count:
            verb, objects = ("is", one) if answer.numbers[0] == 1 else ("are", over)
            return f"There {verb} {rounded(answer.numbers[0])} {objects}."
        return f"{rounded(answer.numbers[0])} of {counted} have a {_words(prop)}."
    if metric in TALLIES and len(answer.numbers) == 1 and not answer.names:
        state = "true" if metric == BooleanMetric.TOTAL_TRUE.value else "false"
        return f"{rounded(answer.numbers[0])} of {counted} have {prop} = {state}."
    if metric in SHARES and len(answer.numbers) == 1 and not answer.names:
        state = "true" if metric.endswith("TRUE") else "false"
        return f"The share of {counted} with {_words(prop)} {state} is {rounded(answer.numbers[0])}."
    if prop and metric and len(answer.numbers) == 1 and not answer.names:
        return f"The {measure(prop, metric)} of {counted} is {rounded(answer.numbers[0])}."
    if not prop and count is not None and answer.numbers == [float(count)] and not answer.names:
        verb, objects = ("is", one) if count == 1 else ("are", over)
        return f"There {verb} {rounded(count)} {objects}."
    return plain(answer)


def _group_values(result: QueryResult) -> dict[str, float]:
    """Each group's one value (its metric, else its count), as the result holds it."""
    values: dict[str, float] = {}
    for name, group in (result.groups or {}).items():
        numbers = [v for metrics in group.aggregations.values() for v in metrics.values() if isinstance(v, int | float)]
        values[name] = float(numbers[0]) if numbers else float(group.count)
    return values


def _per_group_names(answer: FinalAnswer, result: QueryResult) -> str:
    """Each group's names with how often each occurs there: "true: Main (15), Appetizer (12); false: ..."."""
    counts = {
        (group, str(item.value)): item.count
        for group, held in (result.groups or {}).items()
        for metrics in held.aggregations.values()
        for value in metrics.values()
        if isinstance(value, list)
        for item in value
    }

    def listed(group: str, names: list[str]) -> str:
        shown = [f"{n} ({rounded(counts[group, n])})" if (group, n) in counts else n for n in names]
        return ", ".join(shown) or "none"

    return "; ".join(f"{group}: {listed(group, names)}" for group, names in answer.group_names.items())


def _one_group(answer: FinalAnswer, values: dict[str, float], measure: str, over: str, group_by: str) -> str:
    """One group of a per-group result: the one the question names, or the first on the measure."""
    by = _words(str(group_by))
    if answer.names and len(answer.names) == 1 and answer.names[0] in values:
        name = answer.names[0]
        rank = "highest" if values[name] == max(values.values()) else "lowest"
        return f"{name} has the {rank} {measure} of {over} by {by}: {rounded(values[name])}."
    if len(answer.numbers) == 1:
        named = [name for name, value in values.items() if value == answer.numbers[0]]
        if len(named) == 1:
            return f"The {measure} of {over} with {by} {named[0]} is {rounded(answer.numbers[0])}."
    return plain(answer)


def plain(answer: FinalAnswer) -> str:
    """A committed answer without its call (several calls, or none): its values, rounded as a person reads them."""
    if answer.refuses:
        return f"I cannot answer that: {answer.cannot_answer.strip()}."
    parts = [", ".join(answer.names)] if answer.names else []
    parts += [rounded(n) for n in answer.numbers]
    if answer.groups:
        parts.append("; ".join(f"{name}: {rounded(value)}" for name, value in answer.groups.items()))
    parts += [f"{group}: {', '.join(names) or 'none'}" for group, names in answer.group_names.items()]
    return ("The answer is " + ", ".join(parts) + ".") if parts else "The results hold no answer."
