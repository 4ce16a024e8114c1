"""The relevance cut a search question is executed and scored at, chosen per question from the loaded data.

The labels were composed on 100 objects per collection with every object at least `SEARCH_CUT_MARGIN`
away from the documented cut (`SEARCH_MAX_DISTANCE`). With more objects some land on it: the gold
result then depends on float noise (another machine's embedding moves an object across), and a right
call can score wrong. So each search question gets its own cut, from the distances of the objects
its label's filter keeps to its search query, read off the live collection:

- the executor's cut (0.65 by default) when no such object lies within `SEARCH_CUT_MARGIN` of it
  (every label at the size it was composed for keeps its cut);
- otherwise the cut nearest to it, within `CUT_WINDOW`, that keeps every such object
  `CUT_CLEARANCE` (a quarter more than the audit's margin) away, so the audit's moved cut is clear too;
- a cut whose result is itself ambiguous (a TOP_OCCURRENCES tie at its limit among the hits) is
  passed over for the next nearest (`MAX_CUTS_TRIED` in all).

A question is *unstable at this size* (`SearchCut.unstable` says why) when its label has no stable
result on this data, by one rule (`search_cut`): no cut holds, or its TOP_OCCURRENCES ties at the
limit at every admissible cut (every clear cut tried; for a label without a near_text search, the
executor's own). Either way the gold is arbitrary, so a right call could score wrong: the question
is not execution-scored at this size, its answer key is unscored, the pass rate leaves it out
(`evaluation.statistics.pass_rate`) and the audit lists it apart from ties without failing on it.
A tie on a question that is scored still fails the audit.

`GroundTruthCache.search_cut` is the one place a case's cut is computed (cached per question); the
ground truth, the agent's calls (`runner.run_case`, the inspect task) and the scorer's executions of
them all run on `at_cut(executor, cut)`, so the agent sees results at the cut it is scored at.
Only near_text has distances to read; under hybrid or bm25 the executor's own cut stays.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict

from evaluation.execution_match import SCORING_OPTIONS
from executors import QueryDatabaseArguments, WeaviateExecutor
from executors.options import SearchMode
from executors.vocabulary import AGGREGATION_FIELDS, GROUPBY_FIELD, SEARCH_FIELD
from fixtures.authoring.sanity import SEARCH_MARGIN

#: How far the audit moves a cut to look for an object on it: the margin labels were composed with.
SEARCH_CUT_MARGIN = SEARCH_MARGIN
#: How far a moved cut keeps from every object: more than the audit's margin, so a cut moved by
#: the margin still keeps the same objects with room for float32 rounding. Not more: at 1,000
#: objects per collection an unfiltered search has ~140 objects within the window, and gaps of 2.5
#: margins exist there where gaps of 4 do not (restaurants-534, measured).
CUT_CLEARANCE = 1.25 * SEARCH_CUT_MARGIN
#: How far from the executor's cut a moved cut may go: the search keeps (nearly) its measured meaning.
CUT_WINDOW = 0.05
#: Decimals a chosen cut is rounded to (when the rounded value keeps its clearance): readable records.
CUT_DECIMALS = 4
#: Cuts tried, nearest first, for one whose result has no tie of its own.
MAX_CUTS_TRIED = 8
#: How an unstable question whose label ties says so (the rest of the reason says where).
TIED = "its TOP_OCCURRENCES ties at the limit"
#: Result parts a probe of the hits leaves out: it lists the objects the search and filters keep.
_NOT_PROBED = frozenset({*AGGREGATION_FIELDS, GROUPBY_FIELD, "sort"})


class SearchCut(BaseModel):
    """The cut a question runs at on this data, whether it had to move, and whether the question is
    stable at this size (a label without search has one only when it is not)."""

    model_config = ConfigDict(frozen=True)

    #: The cut the question's calls are executed at (the executor's own when unstable).
    value: float
    #: The executor's cut, which `value` replaces.
    default: float
    #: Why the question is unstable at this size (None: `value` holds): no cut holds, or its
    #: TOP_OCCURRENCES ties at every admissible cut. Such a question is not execution-scored.
    unstable: str | None = None

    @property
    def moved(self) -> bool:
        return self.value != self.default


def choose_cut(distances: Iterable[float], default: float, known_up_to: float = math.inf) -> float | None:
    """The cut for these distances (each object the label's filter keeps): `default` when none lies
    within the margin of it, else the cut nearest to it inside the window that keeps `CUT_CLEARANCE`
    from all of them; None when there is none. Distances above `known_up_to` were not read (the
    probe hit its limit), so no cut beyond it is trusted."""
    cuts = clear_cuts(distances, default, known_up_to)
    return cuts[0] if cuts else None


def clear_cuts(distances: Iterable[float], default: float, known_up_to: float = math.inf) -> list[float]:
    """Every cut that holds on these distances, one per distinct set of hits, nearest to `default` first:
    `default` itself when no distance lies within the margin of it, then the nearest point of each gap
    in the window that keeps `CUT_CLEARANCE` from every distance."""
    points = sorted(distances)
    cuts: list[float] = []
    if default + SEARCH_CUT_MARGIN <= known_up_to and all(abs(d - default) >= SEARCH_CUT_MARGIN for d in points):
        cuts.append(default)
    low, high = default - CUT_WINDOW, min(default + CUT_WINDOW, known_up_to - CUT_CLEARANCE)
    free: list[tuple[float, float]] = []
    start = low
    for d in points:
        blocked_from, blocked_to = d - CUT_CLEARANCE, d + CUT_CLEARANCE
        if blocked_to <= start:
            continue
        if blocked_from >= high:
            break
        if blocked_from > start:
            free.append((start, blocked_from))
        start = max(start, blocked_to)
    if start <= high:
        free.append((start, high))
    nearest = sorted(((min(max(default, a), b), a, b) for a, b in free), key=lambda c: (abs(c[0] - default), c[0]))
    hits = {sum(d <= cut for d in points) for cut in cuts}
    for cut, a, b in nearest:
        kept = sum(d <= cut for d in points)
        if kept not in hits:  # the same hits as a cut already listed: nothing new to try
            hits.add(kept)
            cuts.append(_rounded(cut, a, b))
    return cuts


def _rounded(cut: float, low: float, high: float) -> float:
    """`cut` at `CUT_DECIMALS` decimals where that stays in [low, high], else as it is."""
    scale = 10**CUT_DECIMALS
    for candidate in (round(cut, CUT_DECIMALS), math.floor(cut * scale) / scale, math.ceil(cut * scale) / scale):
        if low <= candidate <= high:
            return candidate
    return cut


def search_cut(executor: WeaviateExecutor, ground_truth: QueryDatabaseArguments | dict[str, Any]) -> SearchCut | None:
    """The cut of a label on the data `executor` reads, or why the label is unstable at this size.

    None: the label does not search (or the search mode has no distances) and its result holds at the
    executor's own cut. Reads the objects its filters keep within the window; `ExecutorError`
    propagates (the label's own execution reports it)."""
    arguments = ground_truth.to_tool_arguments() if isinstance(ground_truth, QueryDatabaseArguments) else ground_truth
    default = executor.options.search_max_distance
    if not arguments.get(SEARCH_FIELD) or executor.options.search_mode is not SearchMode.NEAR_TEXT:
        tie = top_occurrences_tie(executor, arguments)  # the only admissible cut is the executor's own
        return None if tie is None else SearchCut(value=default, default=default, unstable=f"{TIED}: {tie}")
    probe = executor.with_options(
        SCORING_OPTIONS.model_copy(update={"search_max_distance": min(default + CUT_WINDOW + CUT_CLEARANCE, 2.0)})
    )
    result = probe.execute({k: v for k, v in arguments.items() if k not in _NOT_PROBED})
    distances = [o.distance for o in result.objects if o.distance is not None]
    known_up_to = max(distances) if result.truncated and distances else math.inf
    cuts = clear_cuts(distances, default, known_up_to)
    ties: list[str] = []
    for cut in cuts[:MAX_CUTS_TRIED]:
        tie = top_occurrences_tie(at_cut(executor, SearchCut(value=cut, default=default)), arguments)
        if tie is None:
            return SearchCut(value=cut, default=default)
        ties.append(tie)
    if ties:  # the result ties at every clear cut: the question's own tie at this size, not the cut's
        where = f"at each of the {len(ties)} clear cuts tried" if len(ties) > 1 else f"at its one clear cut {cuts[0]:g}"
        return SearchCut(value=default, default=default, unstable=f"{TIED} {where}: {ties[0]}")
    near = sum(abs(d - default) <= CUT_WINDOW for d in distances)
    why = (
        f"no cut within {CUT_WINDOW:g} of {default:g} keeps {CUT_CLEARANCE:g} from every object "
        f"({near} objects lie within {CUT_WINDOW:g} of it)"
    )
    return SearchCut(value=default, default=default, unstable=why)


def top_occurrences_tie(executor: WeaviateExecutor, arguments: QueryDatabaseArguments | dict[str, Any]) -> str | None:
    """Where a label's TOP_OCCURRENCES list cuts through a tie (places k and k+1 equally frequent), as
    `executor` runs it: which of them is listed is then arbitrary. None: no tie, or no such metric.
    Run once more with the limit k+1; an `ExecutorError` propagates."""
    arguments = arguments.to_tool_arguments() if isinstance(arguments, QueryDatabaseArguments) else arguments
    aggregation = arguments.get("text_property_aggregation")
    if not isinstance(aggregation, dict) or "TOP_OCCURRENCES" not in str(aggregation.get("metrics")):
        return None
    k = aggregation.get("top_occurrences_limit") or executor.options.default_top_occurrences_limit
    result = executor.execute(
        {**arguments, "text_property_aggregation": {**aggregation, "top_occurrences_limit": k + 1}}
    )
    groups = (
        {"": result.aggregations} if result.groups is None else {g: r.aggregations for g, r in result.groups.items()}
    )
    for key, aggregations in groups.items():
        for prop, metrics in aggregations.items():
            items = metrics.get("TOP_OCCURRENCES")
            if isinstance(items, list) and len(items) > k and _count(items[k - 1]) == _count(items[k]):
                where = f"{prop}{' in group ' + key if key else ''}"
                return f"{where}: places {k} and {k + 1} both occur {_count(items[k])} times"
    return None


def _count(item: Any) -> int:
    return int(item["count"] if isinstance(item, dict) else item.count)


def at_cut(executor: WeaviateExecutor, cut: SearchCut | None) -> WeaviateExecutor:
    """`executor` at a question's cut (itself when the cut is its own, or there is none)."""
    if cut is None or cut.value == executor.options.search_max_distance:
        return executor
    return executor.with_options(executor.options.model_copy(update={"search_max_distance": cut.value}))
