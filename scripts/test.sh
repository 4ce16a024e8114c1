#!/usr/bin/env bash
# The test command of the README: set everything up (and a Docker engine where it can), lint (ruff,
# the layer contract), then run every test tier.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
bash scripts/docker-engine.sh
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/lint-imports
set +e
.venv/bin/python -m pytest "$@"
code=$?
set -e
if [ "$code" -eq 5 ]; then
    echo "pytest collected no tests" >&2
    exit 1
fi
exit "$code"
