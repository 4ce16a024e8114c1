"""What the llama-cpp-python compile costs per set of CPU levels: the portable wheel built from nothing
(the sdist downloaded, its CMake list cut, compiled, packed) once per set, side by side in one run, each into
a cache of its own (the user's cache is untouched); ratios to the first set.

    .venv/bin/python benchmarks/llama_levels.py [--levels x64,haswell --levels all]

`x64,haswell` is what an AVX2 machine compiles (`dbgorilla.llama_build.levels_for`), `all` the five levels a
Zen 4 compiles. Run it on a quiet machine: the compile takes every core (`CMAKE_BUILD_PARALLEL_LEVEL`).
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from pathlib import Path

from dbgorilla.llama_build import LEVELS_ENV, build_wheel, cpu_flags, levels_for


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--levels", action="append", help="a set of levels (repeatable); default x64,haswell and all")
    args = parser.parse_args()
    sets = args.levels or ["x64,haswell", "all"]
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())  # fmt: skip
    print(f"machine: {cpu}, {os.cpu_count()} cores; this CPU's own levels: {', '.join(levels_for(cpu_flags()))}")
    first: float | None = None
    for chosen in sets:
        with tempfile.TemporaryDirectory(prefix="llama-levels-") as cache:
            os.environ["DBGORILLA_CACHE"], os.environ[LEVELS_ENV] = cache, chosen
            started = time.monotonic()
            wheel = build_wheel(echo=lambda _line: None)
            seconds = time.monotonic() - started
            size = wheel.stat().st_size / 1e6
        first = first or seconds
        print(f"levels {chosen:<14} {seconds:7.0f} s  wheel {size:5.1f} MB  ratio {seconds / first:.2f}", flush=True)


if __name__ == "__main__":
    main()
