"""Tool arguments to weaviate-client v4 calls, with typed errors and canonical results.

    from executors import WeaviateExecutor, ExecutorError

    executor = WeaviateExecutor(client)                 # options: search_mode="bm25", limits...
    try:
        result = executor.execute(tool_call.function.arguments)   # JSON string, dict or model
        answer = result.to_llm_text(max_chars=4000)
    except ExecutorError as error:
        answer = error.to_llm_text()                    # error.code: "unknown_property", ...

`ReferenceExecutor` evaluates the same calls (without search) in pure Python with Weaviate's
semantics; `compare_results` diffs two `QueryResult`s. `executors.vocabulary` owns the query
vocabulary (kinds, operators, metrics, slots); `executors.index_health` checks that a
collection's vector index is whole (and waits for asynchronous indexing after an import);
`executors.testing` holds test data helpers.

Text filters follow the property's tokenization (see `executors._text`). Create short,
categorical text properties (the ones filters, group-by and TOP_OCCURRENCES use) with `field`
tokenization: `=` is then exact, case-sensitive equality and LIKE matches the whole value, the
same whole values group-by and TOP_OCCURRENCES report. Free text keeps Weaviate's default
`word`: `=` matches objects containing every non-stopword word of the value, in any order,
case-insensitively; when the value is itself a stored value, the longer stored values holding its
words are excluded (`executors.whole_value`: "Jeopardy!" is not "Double Jeopardy!"). `word`,
`field`, `lowercase` and `whitespace` are modelled exactly by the reference; trigram/gse/kagome
tokenizers and ASCII folding are not.
"""

from executors._text import SUPPORTED_TOKENIZATIONS, go_trim_space, tokenize
from executors._validate import parse_arguments, validate_arguments
from executors.arguments import (
    BooleanAggregation,
    BooleanPropertyFilter,
    IntAggregation,
    IntPropertyFilter,
    QueryDatabaseArguments,
    TextAggregation,
    TextPropertyFilter,
    tool_parameters_schema,
)
from executors.errors import (
    ERROR_CODES,
    Blame,
    ErrorPayload,
    ExecutorError,
    InternalExecutorError,
    InvalidArgumentsError,
    InvalidMetricError,
    InvalidOperatorError,
    InvalidValueError,
    TypeMismatchError,
    UnknownCollectionError,
    UnknownPropertyError,
    UnknownToolError,
    UnsupportedQueryError,
    WeaviateCallError,
    WeaviateUnavailableError,
    codes_blaming,
)
from executors.options import ExecutorOptions, SearchMode
from executors.read_only import ReadOnlyWeaviate
from executors.reference import DataObject, ReferenceExecutor
from executors.results import (
    DEFAULT_LLM_MAX_CHARS,
    SHORT_ID_CHARS,
    GroupResult,
    QueryResult,
    ResultObject,
    TopOccurrence,
    compare_results,
    short_id,
)
from executors.schema import CollectionSchema, DatabaseSchema, PropertySchema
from executors.scope import Scope, ScopeError, ScopeFilter
from executors.spec import AggregationSpec, FilterSpec, QuerySpec
from executors.vocabulary import Component, PropertyKind
from executors.weaviate_executor import WeaviateExecutor

__all__ = [
    "DEFAULT_LLM_MAX_CHARS",
    "ERROR_CODES",
    "SHORT_ID_CHARS",
    "SUPPORTED_TOKENIZATIONS",
    "AggregationSpec",
    "Blame",
    "BooleanAggregation",
    "BooleanPropertyFilter",
    "CollectionSchema",
    "Component",
    "DataObject",
    "DatabaseSchema",
    "ErrorPayload",
    "ExecutorError",
    "ExecutorOptions",
    "FilterSpec",
    "GroupResult",
    "IntAggregation",
    "IntPropertyFilter",
    "InternalExecutorError",
    "InvalidArgumentsError",
    "InvalidMetricError",
    "InvalidOperatorError",
    "InvalidValueError",
    "PropertyKind",
    "PropertySchema",
    "QueryDatabaseArguments",
    "QueryResult",
    "QuerySpec",
    "ReadOnlyWeaviate",
    "ReferenceExecutor",
    "ResultObject",
    "Scope",
    "ScopeError",
    "ScopeFilter",
    "SearchMode",
    "TextAggregation",
    "TextPropertyFilter",
    "TopOccurrence",
    "TypeMismatchError",
    "UnknownCollectionError",
    "UnknownPropertyError",
    "UnknownToolError",
    "UnsupportedQueryError",
    "WeaviateCallError",
    "WeaviateExecutor",
    "WeaviateUnavailableError",
    "codes_blaming",
    "compare_results",
    "go_trim_space",
    "parse_arguments",
    "short_id",
    "tokenize",
    "tool_parameters_schema",
    "validate_arguments",
]
