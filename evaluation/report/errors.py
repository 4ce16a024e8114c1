"""The report's one error: its inputs (run directories, price table) are not usable."""

from __future__ import annotations


class ReportError(ValueError):
    """A run directory or price table that cannot be read; the CLI reports it as a usage problem."""
