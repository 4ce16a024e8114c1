"""Load llama.cpp's CPU code for the CPU it runs on, once per process.

The portable build of llama-cpp-python (`dbgorilla setup llama`: `GGML_BACKEND_DL` with
`GGML_CPU_ALL_VARIANTS`) ships one CPU library per instruction-set level and loads none by itself,
and llama-cpp-python never calls ggml's loader. Everything that creates a `Llama` (the server, the
token counter, the benchmarks) calls `load_cpu_backend` first; on a build without variants (pip's
own, for the build machine's CPU) it does nothing.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

#: Names a CPU library of the portable build to use instead of the best one the CPU reports (e.g.
#: `haswell`), for a machine where the best one fails: a VM can report instructions it does not run.
CPU_VARIANT_ENV = "DBGORILLA_GGML_CPU"


@functools.cache
def load_cpu_backend() -> str:
    """Load llama.cpp's CPU code for this CPU; returns which (`native` for a build without variants).

    A portable build (`dbgorilla.llama_build`) ships one CPU library per instruction-set level and
    loads none by itself; llama-cpp-python does not call ggml's loader, so this does what
    `ggml_backend_load_best` does: ask each library for its score on this CPU and load the highest.
    """
    import ctypes

    import llama_cpp

    lib = Path(llama_cpp.__file__).parent / "lib"
    variants = sorted(lib.glob("libggml-cpu-*.so"))
    if not variants:
        return "native"
    wanted = os.environ.get(CPU_VARIANT_ENV)
    scores: dict[Path, int] = {}
    for path in variants:
        name = path.stem.removeprefix("libggml-cpu-")
        if wanted and name != wanted:
            continue
        score = ctypes.CDLL(str(path)).ggml_backend_score
        score.restype = ctypes.c_int
        scores[path] = score()
    usable = {path: score for path, score in scores.items() if score > 0}
    if not usable:
        raise RuntimeError(
            f"no llama.cpp CPU library in {lib} runs on this CPU"
            + (f" ({CPU_VARIANT_ENV}={wanted} names none that does)" if wanted else "")
        )
    best = max(usable, key=lambda path: usable[path])
    ggml = ctypes.CDLL(str(lib / "libggml.so"))
    ggml.ggml_backend_load.restype = ctypes.c_void_p
    ggml.ggml_backend_load.argtypes = [ctypes.c_char_p]
    if not ggml.ggml_backend_load(str(best).encode()):
        raise RuntimeError(f"llama.cpp could not load its CPU library {best}")
    return best.stem.removeprefix("libggml-cpu-")
