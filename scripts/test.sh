#!/usr/bin/env bash
# The test command of the README: set everything up (and a Docker engine where it can), lint (ruff,
# the layer contract), then run every test tier. With no arguments the unit tier (no server, CPU-bound)
# runs beside the live tiers, which spend much of their time waiting on servers they start and stop;
# its output follows theirs. With arguments, pytest runs them as given.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
bash scripts/docker-engine.sh
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/lint-imports

# pytest's exit code, with "collected no tests" (5) named and counted as a failure.
checked() {
    if [ "$1" -eq 5 ]; then
        echo "pytest collected no tests ($2)" >&2
        return 1
    fi
    return "$1"
}

set +e
if [ "$#" -gt 0 ]; then
    .venv/bin/python -m pytest "$@"
    checked $? "$*"
    exit $?
fi
unit_log=$(mktemp -t dbgorilla-unit-tier.XXXXXX)
echo "unit tier: running beside the live tiers, its output in $unit_log until they finish" >&2
.venv/bin/python -m pytest tests/unit >"$unit_log" 2>&1 &
unit_pid=$!
trap 'kill "$unit_pid" 2>/dev/null' EXIT  # interrupted: the unit tier stops too
.venv/bin/python -m pytest tests/integration tests/model
checked $? "integration and model tiers"
live=$?
wait "$unit_pid"
checked $? "unit tier"
unit=$?
echo "=============================== unit tier ==============================="
cat "$unit_log"
rm -f "$unit_log"
echo "live tiers exit $live, unit tier exit $unit" >&2
[ "$live" -eq 0 ] && [ "$unit" -eq 0 ]
