"""The exit code of each typed error of every layer: what the CLI and the demo page read, below both
(the demo importing it from the CLI package closed an import cycle through `dbgorilla.cli`)."""

from __future__ import annotations

from agent import ModelError
from dbgorilla.errors import DbGorillaError, ExitCode
from evaluation.own_split import OwnSplitError
from evaluation.predictions import PredictionFileError
from evaluation.records import ResultsFileError
from evaluation.report import ReportError
from evaluation.report.prices import PriceTableError
from evaluation.runner import InfrastructureStopped, RunError
from executors import ScopeError
from executors.endpoints import EndpointMismatch
from executors.index_health import IndexBroken
from executors.ownership import InvalidNamespace, NotOurCollection
from fixtures.datasets import DatasetFileError, PaperFileError
from fixtures.loader import LoadFailed
from llm.encoder import EncoderMissing

#: Errors of the lower layers, each reported as one line with the exit code of its kind.
EXIT_CODES: dict[type[Exception], ExitCode] = {
    ReportError: ExitCode.CONFIG,
    RunError: ExitCode.CONFIG,
    InfrastructureStopped: ExitCode.INFRASTRUCTURE,
    LoadFailed: ExitCode.FAILURE,
    NotOurCollection: ExitCode.NOT_OURS,  # nothing was changed; the message names the way out
    EndpointMismatch: ExitCode.CONFIG,  # REST and gRPC reach two Weaviates: nothing was written
    InvalidNamespace: ExitCode.CONFIG,
    IndexBroken: ExitCode.FAILURE,
    ScopeError: ExitCode.CONFIG,
    ModelError: ExitCode.FAILURE,
    EncoderMissing: ExitCode.MISSING_DEPENDENCY,
    OwnSplitError: ExitCode.CONFIG,  # a collection missing or too large, or no question composed
    # A file the user gave is not what the command reads: the message names the file and its bad lines.
    DatasetFileError: ExitCode.BAD_INPUT,
    PaperFileError: ExitCode.BAD_INPUT,
    ResultsFileError: ExitCode.BAD_INPUT,
    PredictionFileError: ExitCode.BAD_INPUT,
    PriceTableError: ExitCode.BAD_INPUT,  # a ReportError too, but the most specific class listed wins
}


def exit_code_of(error: BaseException) -> ExitCode | None:
    """The exit code of an error the CLI reports as one line, or None for a bug (a traceback)."""
    if isinstance(error, DbGorillaError):
        return error.exit_code
    # The most specific class listed wins (PriceTableError is a ReportError too, but bad input).
    return next((EXIT_CODES[kind] for kind in type(error).__mro__ if kind in EXIT_CODES), None)
