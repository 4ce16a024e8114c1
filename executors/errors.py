"""The executor's error taxonomy: every failure reaches the caller as an `ExecutorError`.

Each class carries a stable `code` (what scorers and dashboards count), a `blame` (were the
call's arguments wrong, or did the infrastructure fail: evaluation counts the first against the
model and runs the second again on resume) and a message written for the model that made the
call: it says what was wrong and how to fix the arguments, e.g. by listing the collection's
properties and their types. `field` names the offending argument slot.
"""

from __future__ import annotations

from enum import Enum
from typing import ClassVar

from pydantic import BaseModel, ConfigDict


class ErrorPayload(BaseModel):
    """The JSON form of an error, e.g. for a tool message or a results file."""

    model_config = ConfigDict(frozen=True)

    code: str
    message: str
    field: str | None = None


class Blame(str, Enum):
    """Whose fault a failed call is."""

    ARGUMENTS = "arguments"  # the model's call: wrong collection, property, operator, value...
    INFRASTRUCTURE = "infrastructure"  # Weaviate down or failing: not the model's fault
    EXECUTOR = "executor"  # a bug on our side


class ExecutorError(Exception):
    """Base class: a tool call that could not be turned into a result."""

    code: ClassVar[str] = "executor_error"
    blame: ClassVar[Blame] = Blame.ARGUMENTS

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, message={self.message!r}, field={self.field!r})"

    def to_payload(self) -> ErrorPayload:
        return ErrorPayload(code=self.code, message=self.message, field=self.field)

    def to_llm_text(self) -> str:
        """What the model sees when its call failed: the code and how to fix it."""
        return f"Error ({self.code}): {self.message}"


class InvalidArgumentsError(ExecutorError):
    """The arguments are not a well-formed `query_database` call (bad JSON, unknown slots...)."""

    code = "invalid_arguments"


class UnknownToolError(ExecutorError):
    """The model called a tool name that was not offered."""

    code = "unknown_tool"


class UnknownCollectionError(ExecutorError):
    code = "unknown_collection"


class UnknownPropertyError(ExecutorError):
    code = "unknown_property"


class TypeMismatchError(ExecutorError):
    """A filter, aggregation or group-by slot used on a property of another type."""

    code = "type_mismatch"


class InvalidOperatorError(ExecutorError):
    code = "invalid_operator"


class InvalidMetricError(ExecutorError):
    code = "invalid_metric"


class InvalidValueError(ExecutorError):
    """A value of the wrong type, non-finite, empty or out of the documented bounds."""

    code = "invalid_value"


class UnknownReferenceError(ExecutorError):
    """A reference filter names a reference the collection does not have (or a property its target lacks)."""

    code = "unknown_reference"


class InvalidDateError(ExecutorError):
    """A date filter value that is not an RFC 3339 date-time (or date), or a range that ends before it starts."""

    code = "invalid_date"


class UnsortablePropertyError(ExecutorError):
    """A sort on a property that cannot be ordered (only number and date properties can)."""

    code = "unsortable_property"


class UnsupportedQueryError(ExecutorError):
    """A valid call this executor cannot run, e.g. a search on the pure-Python reference executor."""

    code = "unsupported_query"


class WeaviateCallError(ExecutorError):
    """Weaviate rejected or failed the query (`WeaviateQueryError` and friends)."""

    code = "weaviate_error"
    blame = Blame.INFRASTRUCTURE


class WeaviateUnavailableError(ExecutorError):
    """Weaviate could not be reached (server down, connection refused, timeout, closed client)."""

    code = "weaviate_unavailable"
    blame = Blame.INFRASTRUCTURE


class InternalExecutorError(ExecutorError):
    """A bug in the executor itself; wrapped so callers still only ever see `ExecutorError`."""

    code = "internal_error"
    blame = Blame.EXECUTOR


ERROR_CLASSES: tuple[type[ExecutorError], ...] = (
    InvalidArgumentsError,
    UnknownToolError,
    UnknownCollectionError,
    UnknownPropertyError,
    TypeMismatchError,
    InvalidOperatorError,
    InvalidMetricError,
    InvalidValueError,
    UnknownReferenceError,
    InvalidDateError,
    UnsortablePropertyError,
    UnsupportedQueryError,
    WeaviateCallError,
    WeaviateUnavailableError,
    InternalExecutorError,
)
ERROR_CODES: tuple[str, ...] = tuple(cls.code for cls in ERROR_CLASSES)


def codes_blaming(blame: Blame) -> frozenset[str]:
    """The error codes whose failures are `blame`'s fault (e.g. the arguments')."""
    return frozenset(cls.code for cls in ERROR_CLASSES if cls.blame is blame)
