"""Executor options and the documented result limits.

Every limit the executor applies is a named constant here and appears in the rendered call, so
a result never silently depends on a server default:

- `SEARCH_MAX_DISTANCE`: what a search *means*: the objects whose cosine distance to the query is
  at most this (near_text's `distance`, hybrid's `max_vector_distance`), at most `SEARCH_HIT_LIMIT`
  of them, closest first. Filters narrow the hits; aggregations and group-by run over exactly the
  hits (a second call restricted to their ids), so a search always restricts. The threshold was
  chosen by measuring precision and recall against the generator's topic labels (docs/agent.md, "What a search means").
  The benchmark runs a question whose objects crowd this cut on the loaded data at the nearest
  clear cut instead (`evaluation/search_cut.py`, through `with_options`).
- `SEARCH_LIMIT`: hits listed when there is no aggregation or group-by (the count says how many matched).
- `FETCH_LIMIT`: objects a query without search returns: the first ones in UUID order
  (the cursor without filters, `Sort.by_id()` with; see `_plan` for the details).
- `MAX_GROUPS`: groups returned by a group-by, largest first (ties by value). Weaviate is asked
  for up to `GROUP_FETCH_LIMIT` groups and the cut is made here, because Weaviate's own cut
  picks arbitrarily among groups of equal size; beyond `GROUP_FETCH_LIMIT` distinct values
  the groups at the boundary may vary between runs.
- `SAMPLES_PER_GROUP` / `GROUP_SAMPLE_SCAN_LIMIT`: a group-by without aggregation shows up to
  `SAMPLES_PER_GROUP` sample objects per group, taken from the search hits (closest first) or,
  without search, from the first `GROUP_SAMPLE_SCAN_LIMIT` matching objects in UUID order.
- `DEFAULT_TOP_OCCURRENCES_LIMIT`: TOP_OCCURRENCES without `top_occurrences_limit` (Weaviate's
  own default, sent explicitly); the tool schema caps the limit at `MAX_TOP_OCCURRENCES_LIMIT`.
"""

from __future__ import annotations

from enum import Enum

from pydantic import BaseModel, ConfigDict, Field

SEARCH_MAX_DISTANCE = 0.65
SEARCH_HIT_LIMIT = 1000
SEARCH_LIMIT = 10
FETCH_LIMIT = 10
MAX_GROUPS = 100
GROUP_FETCH_LIMIT = 1000
SAMPLES_PER_GROUP = 3
GROUP_SAMPLE_SCAN_LIMIT = 250
DEFAULT_TOP_OCCURRENCES_LIMIT = 5
MAX_TOP_OCCURRENCES_LIMIT = 100
#: Longest accepted text filter value and search query, in characters.
MAX_TEXT_VALUE_CHARS = 1000
MAX_SEARCH_QUERY_CHARS = 2000
#: Largest magnitude accepted for a filter on an `int` property (exact in float64 and int64).
MAX_INT_FILTER_MAGNITUDE = 2**53


class SearchMode(str, Enum):
    """How `search_query` finds its hits: an executor option, not a tool argument.

    near_text (the default): vector distance within `search_max_distance`. hybrid: keyword matches
    plus vector matches within that distance, fused. bm25: keyword matches only.
    """

    NEAR_TEXT = "near_text"
    HYBRID = "hybrid"
    BM25 = "bm25"


class ExecutorOptions(BaseModel):
    """Per-executor settings; the defaults are the module constants above."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    search_mode: SearchMode = SearchMode.NEAR_TEXT
    alpha: float | None = Field(default=None, ge=0.0, le=1.0, description="Hybrid alpha; None = server default.")
    search_max_distance: float = Field(default=SEARCH_MAX_DISTANCE, gt=0.0, le=2.0)
    search_hit_limit: int = Field(default=SEARCH_HIT_LIMIT, ge=1, le=10_000)
    search_limit: int = Field(default=SEARCH_LIMIT, ge=1, le=10_000)
    fetch_limit: int = Field(default=FETCH_LIMIT, ge=1, le=10_000)
    max_groups: int = Field(default=MAX_GROUPS, ge=1, le=10_000)
    group_fetch_limit: int = Field(default=GROUP_FETCH_LIMIT, ge=1, le=100_000)
    samples_per_group: int = Field(default=SAMPLES_PER_GROUP, ge=0, le=100)
    group_sample_scan_limit: int = Field(default=GROUP_SAMPLE_SCAN_LIMIT, ge=0, le=100_000)
    default_top_occurrences_limit: int = Field(
        default=DEFAULT_TOP_OCCURRENCES_LIMIT, ge=1, le=MAX_TOP_OCCURRENCES_LIMIT
    )


#: Limits that cover whole result sets (every object a filter keeps, every hit of a search): what
#: results are compared under, by the scorer, the label audit and benchmark authoring. Weaviate
#: caps limit at QUERY_MAXIMUM_RESULTS (10,000) and the executor asks for one extra.
COMPLETE_RESULTS = ExecutorOptions(fetch_limit=9_999, search_limit=SEARCH_HIT_LIMIT, max_groups=1000)
