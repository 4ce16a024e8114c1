"""A tool call's plan as a whole weaviate-client v4 program: the query as code, to paste and run.

The program is rendered from the `QueryPlan` the executor ran, from the same `Expr` sources as
`QueryResult.calls`, so it cannot drift from the executor's own calls: imports, the connection
the executor used, the collection under its physical name (namespaces), the calls in order, and
prints of what they returned. What the executor then does in Python (ranking ties by UUID,
cutting pages, ordering groups, NaN as None) is said in comments beside the calls it applies to.

Each call's response is kept in a variable named by its purpose (`hits`, `top`, `objects`, `count`,
`aggregate`, `groups`, `group_samples`: `PURPOSES`), which is what the code-equivalence test reads.
"""

from __future__ import annotations

import json
import re
import textwrap
from dataclasses import dataclass
from typing import Any

from executors._assemble import notes_for
from executors._plan import LIMITED_OPERATORS, PlannedCall, QueryPlan
from executors.options import SearchMode
from executors.vocabulary import SCHEMA_METRICS

#: The variables a program keeps each call's response in, one per purpose a plan can have.
PURPOSES = ("hits", "top", "objects", "count", "aggregate", "groups", "group_samples")
_INDENT = "    "
#: Names a call's source may use, and where a program imports them from.
_IMPORTS = {
    "datetime": "from datetime import datetime",
    "GroupByAggregate": "from weaviate.classes.aggregate import GroupByAggregate",
    "ConsistencyLevel": "from weaviate.classes.config import ConsistencyLevel",
    "Auth": "from weaviate.classes.init import Auth",
}
_QUERY_CLASSES = ("Filter", "MetadataQuery", "Metrics", "QueryReference", "Sort")


@dataclass(frozen=True)
class Endpoint:
    """Where the executor's client connects: what the program's own connection opens."""

    http_host: str
    http_port: int
    http_secure: bool
    grpc_host: str
    grpc_port: int
    grpc_secure: bool

    def source(self) -> str:
        if not self.http_secure and not self.grpc_secure and self.http_host == self.grpc_host:
            return (
                f"weaviate.connect_to_local(host={self.http_host!r}, port={self.http_port}, grpc_port={self.grpc_port})"
            )
        return (
            f"weaviate.connect_to_custom(\n{_INDENT}http_host={self.http_host!r}, http_port={self.http_port}, "
            f"http_secure={self.http_secure},\n{_INDENT}grpc_host={self.grpc_host!r}, grpc_port={self.grpc_port}, "
            f"grpc_secure={self.grpc_secure},\n"
            f'{_INDENT}auth_credentials=Auth.api_key(os.environ["WEAVIATE_API_KEY"]),  # your key, if it needs one\n)'
        )


def endpoint_of(client: Any) -> Endpoint | None:
    """The client's connection parameters (weaviate-client 4.x keeps them privately); None when unreadable."""
    params = getattr(getattr(client, "_connection", None), "_connection_params", None)
    http, grpc = getattr(params, "http", None), getattr(params, "grpc", None)
    try:
        endpoint = Endpoint(
            http.host,
            int(http.port),
            bool(http.secure),
            grpc.host,
            int(grpc.port),
            bool(grpc.secure),  # type: ignore[union-attr]
        )
    except (AttributeError, TypeError, ValueError):
        return None
    return endpoint if isinstance(endpoint.http_host, str) and isinstance(endpoint.grpc_host, str) else None


@dataclass(frozen=True)
class Snippet:
    """One executed plan and where it ran: enough to write the program that makes the same calls."""

    plan: QueryPlan
    physical_name: str
    endpoint: Endpoint | None = None
    consistency_level: str | None = None

    def program(self) -> str:
        body = [*_calls(self.plan), "", *_prints(self.plan)]
        head = _head(self)
        text = "\n".join(head + [_INDENT + line if line else "" for line in body])
        lines = [*_header(self.plan), "", *_imports(text), "", text, "finally:", f"{_INDENT}client.close()", ""]
        return "\n".join(lines)


def _header(plan: QueryPlan) -> list[str]:
    spec = plan.spec
    call = json.dumps(spec.arguments.to_tool_arguments(), ensure_ascii=False)
    lines = [
        "# The weaviate-client v4 calls dbgorilla-live made for one query_database call "
        f"({spec.operator_class()} on {spec.collection.name}):",
        f"# {call}",
    ]
    if spec.scope:
        lines.append("# The caller's scope is ANDed into every filter below.")
    return lines + _comment_lines(notes_for(spec, plan.options))


def _imports(text: str) -> list[str]:
    lines = []
    if "os.environ" in text:
        lines.append("import os")
    if re.search(r"\bdatetime\.", text):
        lines.append(_IMPORTS["datetime"])
    lines += ["", "import weaviate"]
    lines += [line for name, line in _IMPORTS.items() if name != "datetime" and re.search(rf"\b{name}\b", text)]
    used = [name for name in _QUERY_CLASSES if re.search(rf"\b{name}\b", text)]
    if used:
        lines.append(f"from weaviate.classes.query import {', '.join(used)}")
    return lines[1:] if lines[0] == "" else lines


def _head(snippet: Snippet) -> list[str]:
    if snippet.endpoint is not None:
        connect = f"client = {snippet.endpoint.source()}"
    else:
        connect = "client = weaviate.connect_to_local()  # dbgorilla could not read its connection: open yours"
    collection = f"collection = client.collections.get({snippet.physical_name!r})"
    if snippet.consistency_level is not None:
        collection += f".with_consistency_level(ConsistencyLevel.{snippet.consistency_level})"
    return [connect, "try:", _INDENT + collection, ""]


def _call(call: PlannedCall, indent: str) -> list[str]:
    """`purpose = collection.<namespace>.<method>(...)`, one argument a line."""
    arguments = [a.source for a in call.args] + [f"{k}={v.source}" for k, v in call.shown_kwargs().items()]
    opening = f"{indent}{call.purpose} = collection.{call.namespace}.{call.method}("
    return [opening, *(f"{indent}{_INDENT}{argument}," for argument in arguments), f"{indent})"]


def _calls(plan: QueryPlan) -> list[str]:
    lines: list[str] = []
    whole = [whole.comment() for whole in plan.whole_values]  # said once, beside the first filtered call
    for call in plan.calls:
        if whole and "filters" in call.kwargs:
            lines += _comment_lines(whole)
            whole = []
        if call.over_hits:
            nothing = "no objects to aggregate" if call.purpose == "aggregate" else "no groups"
            top = plan.ids_from == "top"
            lines += [
                f"# The next call runs over exactly these {'objects' if top else 'hits'}: their ids are ANDed "
                "into its filters.",
                f"hit_ids = [str(obj.uuid) for obj in {plan.ids_from}.objects]",
                *_comment_lines(_comments(plan, call)),
                f"{call.purpose} = None  # {'no object' if top else 'the search'} matched: {nothing}",
                "if hit_ids:",
                *_call(call, _INDENT),
            ]
        else:
            lines += [*_comment_lines(_comments(plan, call)), *_call(call, "")]
    return lines


def _comment_lines(comments: list[str], width: int = 100) -> list[str]:
    return [f"# {line}" for comment in comments for line in textwrap.wrap(comment, width - 2)]


def _comments(plan: QueryPlan, call: PlannedCall) -> list[str]:
    """What the executor does with this call's response beyond the call itself."""
    spec, options = plan.spec, plan.options
    lone = not spec.any_of and len(spec.applied_filters) == 1 and spec.applied_filters[0].operator in LIMITED_OPERATORS
    if call.purpose == "hits":
        listing = spec.group_by is None and not spec.aggregations
        return [
            "The search's hits, closest first (dbgorilla ranks equal distances or scores by UUID)"
            + (f"; it lists the first {options.search_limit}." if listing else ".")
        ]
    if call.purpose == "top":
        assert spec.sort is not None
        return [f"The ids of the first {spec.sort.limit} objects in this order: Weaviate's aggregate does not sort."]
    if call.purpose in ("objects", "group_samples"):
        comments = []
        if call.purpose == "objects" and spec.sort is None:
            comments.append(f"One more than the {options.fetch_limit} listed, to know whether more exist.")
        if call.purpose == "group_samples":
            comments.append(f"Sample objects: each group's first {options.samples_per_group} of these, in UUID order.")
        if lone and "filters" in call.kwargs:
            comments.append(
                "The lone filter is ANDed with itself: Weaviate v1.39 resolves a lone range or LIKE filter only up "
                "to `limit` before sorting; nested, it is resolved completely."
            )
        if "after" in call.kwargs:
            comments.append("Without filters, the cursor lists objects in UUID order reading only `limit` of them.")
        return comments
    if call.purpose == "count":
        return ["How many objects match (the listing above is one page of them)."]
    comments = _metric_comments(plan, escaped=call.purpose == "aggregate" and not spec.is_filtered)
    if call.purpose == "groups":
        comments.insert(
            0,
            f"dbgorilla orders groups largest first (ties by value) and keeps {options.max_groups}; more are "
            "fetched because Weaviate breaks ties between equal-sized groups at its limit arbitrarily.",
        )
    return comments


def _metric_comments(plan: QueryPlan, escaped: bool) -> list[str]:
    comments = []
    for aggregation in plan.spec.aggregations:
        metrics = set(aggregation.metrics)
        if metrics & set(SCHEMA_METRICS):
            prop = aggregation.prop
            comments.append(f"TYPE is not asked of Weaviate: '{prop.name}' is {prop.data_type} in the schema.")
        if any(m.startswith("PERCENTAGE") for m in metrics):
            comments.append("PERCENTAGE_* over no values is NaN here; dbgorilla reports None (as MEAN over none).")
        if "TOP_OCCURRENCES" in metrics:
            unescape = "; this unfiltered scan returns values JSON-escaped (\\u0026), which it unescapes"
            comments.append(f"dbgorilla orders TOP_OCCURRENCES by count, then value{unescape if escaped else ''}.")
    return comments


def _prints(plan: QueryPlan) -> list[str]:
    spec, options = plan.spec, plan.options
    links = bool(spec.collection.references)
    shown = "obj.uuid, obj.properties" + (", links" if links else "")
    each = [
        f"{_INDENT}links = {{name: [str(o.uuid) for o in ref.objects]"
        " for name, ref in (obj.references or {}).items()}"
    ]
    each = each if links else []
    lines: list[str] = []
    purposes = {call.purpose for call in plan.calls}
    if "objects" in purposes:
        page = spec.sort.limit if spec.sort is not None else options.fetch_limit
        lines += [
            'print(count.total_count, "objects match")',
            f"for obj in objects.objects[:{page}]:",
            *each,
            f"{_INDENT}print({shown})",
        ]
    elif "hits" in purposes and spec.group_by is None and not spec.aggregations:
        metric = "distance" if options.search_mode is SearchMode.NEAR_TEXT else "score"
        lines += [
            'print(len(hits.objects), "hits")',
            f"for rank, obj in enumerate(hits.objects[:{options.search_limit}], start=1):",
            *each,
            f"{_INDENT}print(rank, obj.metadata.{metric}, {shown})",
        ]
    if "aggregate" in purposes:
        lines += [
            "if aggregate is None:",
            f'{_INDENT}print("no objects to aggregate")',
            "else:",
            f'{_INDENT}print("total count:", aggregate.total_count)',
            f"{_INDENT}for name, metrics in aggregate.properties.items():",
            f"{_INDENT * 2}print(name, metrics)",
        ]
    if "groups" in purposes:
        lines += _group_prints(plan)
    return lines


def _group_prints(plan: QueryPlan) -> list[str]:
    spec, options = plan.spec, plan.options
    assert spec.group_by is not None
    source = "group_samples" if plan.call("group_samples") is not None else "hits" if spec.has_search else None
    if spec.aggregations or options.samples_per_group == 0:
        source = None
    lines = ["found = groups.groups if groups is not None else []", 'print(len(found), "groups")']
    if source is not None:
        lines += [
            "samples = {}",
            f"for obj in {source}.objects:",
            f"{_INDENT}key = obj.properties.get({spec.group_by.name!r})",
            f"{_INDENT}if len(samples.setdefault(key, [])) < {options.samples_per_group}:",
            f"{_INDENT * 2}samples[key].append(str(obj.uuid))",
        ]
    lines += [
        "for group in sorted(found, key=lambda g: (-(g.total_count or 0), str(g.grouped_by.value)))"
        f"[:{options.max_groups}]:",
        f"{_INDENT}print(group.grouped_by.value, group.total_count, group.properties"
        + (", samples.get(group.grouped_by.value, []))" if source is not None else ")"),
    ]
    return lines


__all__ = ["PURPOSES", "Endpoint", "Snippet", "endpoint_of"]
