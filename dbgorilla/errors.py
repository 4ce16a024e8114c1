"""Typed infrastructure errors, each carrying the exit code the CLI returns for it."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    FAILURE = 1
    USAGE = 2
    NOT_RUNNING = 3
    STALE = 4
    PORT_IN_USE = 5
    BUILD_FAILED = 6
    TIMEOUT = 7
    MISSING_DEPENDENCY = 8
    CONFIG = 9
    BAD_INPUT = 10  # a file or argument the user gave is not what the command reads
    INFRASTRUCTURE = 11  # the model server, Weaviate or the embedder failed: not a score
    NOT_OURS = 12  # a collection the project did not create stands where it would write


class DbGorillaError(Exception):
    """Base of every error the CLI reports as a one-line message instead of a traceback."""

    exit_code: ExitCode = ExitCode.FAILURE


class ConfigError(DbGorillaError):
    exit_code = ExitCode.CONFIG


class ServiceNotRunning(DbGorillaError):
    exit_code = ExitCode.NOT_RUNNING


class PortInUse(DbGorillaError):
    exit_code = ExitCode.PORT_IN_USE


class BuildFailed(DbGorillaError):
    exit_code = ExitCode.BUILD_FAILED


class StartupTimeout(DbGorillaError):
    exit_code = ExitCode.TIMEOUT


class MissingDependency(DbGorillaError):
    """A binary, package or model file the command needs is not installed."""

    exit_code = ExitCode.MISSING_DEPENDENCY


class BadInput(DbGorillaError):
    """A file the user gave is not what the command reads (named with its line and what was expected)."""

    exit_code = ExitCode.BAD_INPUT


class InfrastructureFailure(DbGorillaError):
    """The model server, Weaviate or the embedder failed: reported as a failure, never as a score of 0."""

    exit_code = ExitCode.INFRASTRUCTURE


class NotOurs(DbGorillaError):
    """A collection without the project's ownership marker stands where a command would write."""

    exit_code = ExitCode.NOT_OURS
