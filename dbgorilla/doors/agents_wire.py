"""The hosted Query Agent's wire format, read and written: what `weaviate-agents` sends and parses.

`dbgorilla serve` answers the official client (`weaviate_agents.query.QueryAgent`), so what it
returns must validate as that client's models (`query/classes/response.py` of weaviate-agents 1.8):
a search is `QueryResultWithCollectionNormalized` (query, filters as one `PropertyFilter` or a nested
`FilterAndOr`, collection, sort), an aggregation is `AggregationResultWithCollectionNormalized`
(one property and one metric each). Both are written from the executor's validated call
(`executors.QuerySpec`), so they say what ran. A search the client sends back to page through
(`SearchModeExecutionRequest.searches`) is read into the `compound` tool's arguments and runs
through the same executor, under the same additional filters.
"""

from __future__ import annotations

from typing import Any

from executors import QuerySpec
from executors.scope import Scope, ScopeFilter
from executors.spec import FilterSpec
from executors.vocabulary import (
    CLIENT_FILTER_OPERATORS,
    DATE_RANGE_ENDS,
    MAX_SORT_LIMIT,
    QUERY_AGENT_METRICS,
    PropertyKind,
)

#: The client's filter and aggregation type of each kind of property (a date's is `date_range`, `date`).
AGGREGATION_TYPES = {PropertyKind.NUMBER: "integer", PropertyKind.TEXT: "text", PropertyKind.BOOLEAN: "boolean"}


class WireError(ValueError):
    """A request the local server cannot serve as written: said to the client, never a crash."""

    def __init__(self, message: str, code: str = "unsupported") -> None:
        super().__init__(message)
        self.message, self.code = message, code


def _value(value: Any) -> Any:
    return value.isoformat().replace("+00:00", "Z") if hasattr(value, "isoformat") else value


def property_filter(spec: FilterSpec) -> dict[str, Any]:
    """One filter as the client's `PropertyFilter` (a property read through a reference is `ref.prop`)."""
    name = f"{spec.via}.{spec.prop.name}" if spec.via else spec.prop.name
    value = _value(spec.value)
    if spec.is_date:
        if spec.operator in DATE_RANGE_ENDS:
            end, inclusive = DATE_RANGE_ENDS[spec.operator]
            bound = {f"date_{end}": value, f"inclusive_{end}": inclusive}
        else:
            bound = {"exact_timestamp": value, "operator": spec.operator}
        return {"filter_type": "date_range", "property_name": name, "value": bound}
    kind = AGGREGATION_TYPES[spec.kind]
    return {"filter_type": kind, "property_name": name, "operator": spec.operator, "value": value}


def _joined(combine: str, parts: list[dict[str, Any]]) -> dict[str, Any] | None:
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else {"combine": combine, "filters": parts}


def filters_of(spec: QuerySpec) -> dict[str, Any] | None:
    """The filters the call ran with (not the caller's additional ones): ANDed, the `any` alternatives ORed."""
    parts = [property_filter(f) for f in spec.filters]
    alternatives = [_joined("AND", [property_filter(f) for f in group]) for group in spec.any_of]
    either = _joined("OR", [a for a in alternatives if a is not None])
    return _joined("AND", parts + ([either] if either is not None else []))


def search_of(spec: QuerySpec) -> dict[str, Any]:
    """A call that listed or searched objects, as the client's normalized search."""
    sort = None
    if spec.sort is not None:
        order = "descending" if spec.sort.descending else "ascending"
        sort = {"property_name": spec.sort.prop.name, "order": order, "tie_break": None}
    return {
        "query": spec.search_query,
        "filters": filters_of(spec),
        "collection": spec.collection.name,
        "sort_property": sort,
        "uuid_value": None,
    }


def aggregations_of(spec: QuerySpec) -> list[dict[str, Any]]:
    """A call that aggregated or grouped: one record per property and metric (a bare group-by counts)."""
    group = spec.group_by.name if spec.group_by is not None else None
    records = []
    for aggregation in spec.aggregations:
        kind = "date" if aggregation.prop.data_type == "date" else AGGREGATION_TYPES[aggregation.kind]
        for metric in aggregation.metrics:
            body: dict[str, Any] = {
                "aggregation_type": kind,
                "property_name": aggregation.prop.name,
                "metrics": QUERY_AGENT_METRICS.get(metric, metric),
            }
            if kind == "text":
                body["top_occurrences_limit"] = aggregation.top_occurrences_limit
            records.append(body)
    if not records and group is not None:
        records.append({"aggregation_type": "text", "property_name": group, "metrics": "COUNT"})
    filters = filters_of(spec)
    return [
        {"groupby_property": group, "aggregation": r, "filters": filters, "collection": spec.collection.name}
        for r in records
    ]


def _condition(item: dict[str, Any]) -> list[dict[str, Any]]:
    """A client `PropertyFilter` as `compound` conditions (a date range is one or two bounds)."""
    name, kind = item.get("property_name"), item.get("filter_type")
    if not isinstance(name, str) or "." in name:
        raise WireError(f"a filter on {name!r} cannot be paged here (a property read through a reference)")
    if kind == "date_range":
        value = item.get("value") or {}
        if "exact_timestamp" in value:
            return [{"property_name": name, "operator": value["operator"], "value": value["exact_timestamp"]}]
        out = []
        for end, (low, high) in (("from", (">", ">=")), ("to", ("<", "<="))):
            if value.get(f"date_{end}") is not None:
                operator = high if value.get(f"inclusive_{end}") else low
                out.append({"property_name": name, "operator": operator, "value": value[f"date_{end}"]})
        return out
    if kind not in ("integer", "text", "boolean"):
        raise WireError(f"a {kind} filter cannot be paged here")
    return [{"property_name": name, "operator": item["operator"], "value": item["value"]}]


def _conditions(filters: dict[str, Any] | None) -> tuple[list[dict[str, Any]], str]:
    """A normalized search's filters as `compound` conditions and their match (`all` or `any`)."""
    if filters is None:
        return [], "all"
    if "combine" not in filters:
        return _condition(filters), "all"
    if any("combine" in item for item in filters["filters"]):
        raise WireError("nested AND/OR filters cannot be paged here; send the search again as a question")
    conditions = [c for item in filters["filters"] for c in _condition(item)]
    return conditions, "any" if filters["combine"].upper() == "OR" else "all"


def arguments_of(search: dict[str, Any], limit: int) -> dict[str, Any]:
    """A normalized search as the `compound` tool's arguments (a sort lists at most `limit`)."""
    conditions, match = _conditions(search.get("filters"))
    arguments: dict[str, Any] = {"collection_name": search["collection"]}
    if search.get("query"):
        arguments["search_query"] = search["query"]
    if conditions:
        arguments["conditions"], arguments["match"] = conditions, match
    sort = search.get("sort_property")
    if sort:
        arguments["sort"] = {
            "property_name": sort["property_name"],
            "order": sort["order"],
            "limit": min(limit, MAX_SORT_LIMIT),
        }
    return arguments


def _scope_filters(item: dict[str, Any]) -> list[ScopeFilter]:
    if "combine" in item:
        if item["combine"].lower() != "and":
            raise WireError("additional_filters joined by OR are not served; join them by AND")
        return [f for part in item["filters"] for f in _scope_filters(part)]
    target, operator = item.get("target"), CLIENT_FILTER_OPERATORS.get(str(item.get("operator")))
    if not isinstance(target, str) or operator is None:
        raise WireError(f"an additional filter is not served here: {item}")
    return [ScopeFilter(property_name=target, operator=operator, value=item.get("value"))]


def collections_of(entries: list[Any]) -> tuple[list[str], Scope | None]:
    """The client's collections (names or `QueryAgentCollectionConfig`s): the names, and the
    additional filters as a scope the model cannot remove (every other collection named is unscoped)."""
    names: list[str] = []
    filters: dict[str, list[ScopeFilter]] = {}
    for entry in entries:
        if isinstance(entry, str):
            names.append(entry)
            continue
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise WireError(f"a collection is a name or a collection config, not {entry!r}", "invalid_request")
        for field in ("tenant", "target_vector", "view_properties"):
            if entry.get(field):
                raise WireError(f"`{field}` is not served by the local Query Agent (collection {entry['name']})")
        names.append(entry["name"])
        if entry.get("additional_filters"):
            filters[entry["name"]] = _scope_filters(entry["additional_filters"])
    if not names:
        raise WireError("no collections named", "invalid_request")
    if not filters:
        return names, None
    unscoped = {name: [] for name in names if name not in filters}
    return names, Scope(filters={**filters, **unscoped})
