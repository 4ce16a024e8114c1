"""The `dbgorilla` command: the top layer. One module per command group, no business logic here.

Exit codes are the values of `dbgorilla.errors.ExitCode`; errors of the lower layers map to them
in `dbgorilla.exit_codes.EXIT_CODES`.
"""

from __future__ import annotations

import logging
import sys
import warnings

import typer
from rich.markup import escape

from dbgorilla.cli import ablate, ask, data, demo, evaluate, examples, judge, mcp_serve, report, serve, services
from dbgorilla.cli.console import err
from dbgorilla.exit_codes import exit_code_of

app = typer.Typer(
    help="dbgorilla-live: an LLM queries a live Weaviate through function calling.\n\n"
    "Exit codes: 0 ok, 1 failure, 2 usage, 3 not running, 4 stale server, 5 port in use, "
    "6 build failed, 7 start-up timeout, 8 missing dependency, 9 configuration, 10 bad input, "
    "11 infrastructure failure, 12 not ours (a collection the project did not create).",
    no_args_is_help=True,
    add_completion=False,
)
# Service commands first in --help, then data, the agent, the report, the eval and the judge.
for group in (services, data, ask, examples, mcp_serve, serve, demo, report, evaluate, ablate, judge):
    group.register(app)


def main() -> None:
    """Click's own exit codes (0, 1 abort, 2 usage) stand; our typed errors map to theirs."""
    # Services are started detached and outlive the command: their Popen objects (and a library's
    # /dev/null handle) are not leaks, and interpreter warnings about them are not for users.
    warnings.filterwarnings("ignore", category=ResourceWarning)
    # weaviate-client logs each failed batch as a raw dict through Python's last-resort handler;
    # the commands report failed objects themselves, one line each, with the object's index.
    logging.getLogger("weaviate-client").addHandler(logging.NullHandler())
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as error:
        code = exit_code_of(error)
        if code is None:
            raise
        err.print(f"[red]error:[/] {escape(str(error))}", highlight=False)  # a user's file may hold [tags]
        sys.exit(int(code))
