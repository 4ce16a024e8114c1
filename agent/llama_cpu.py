"""Load llama.cpp's CPU code for the CPU it runs on, once per process.

The portable build of llama-cpp-python (`dbgorilla setup llama`: `GGML_BACKEND_DL` with
`GGML_CPU_ALL_VARIANTS`) ships one CPU library per instruction-set level and loads none by itself,
and llama-cpp-python never calls ggml's loader. Everything that creates a `Llama` (the server, the
token counter, the benchmarks) calls `load_cpu_backend` first; on a build without variants (pip's
own, for the build machine's CPU) it does nothing.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.metadata
import json
import os
from pathlib import Path

#: Names a CPU library of the portable build to use instead of the best one the CPU reports (e.g.
#: `haswell`), for a machine where the best one fails: a VM can report instructions it does not run.
CPU_VARIANT_ENV = "DBGORILLA_GGML_CPU"


def cpu_libraries() -> list[Path]:
    """The CPU libraries of a portable build, wherever its wheel put them (ggml installs them into
    the wheel's `bin/`, which pip puts beside the packages); none for a build without variants."""
    try:
        files = importlib.metadata.files("llama-cpp-python") or []
    except importlib.metadata.PackageNotFoundError:
        return []
    return sorted(Path(str(f.locate())) for f in files if f.name.startswith("libggml-cpu-") and f.name.endswith(".so"))


def ranked_variants() -> list[str]:
    """The portable build's CPU libraries that say they run here, best first, by ggml's own score
    (`ggml_backend_score`: the instruction sets the CPU reports). A VM can report instructions it
    does not run, so the best is not proved until `dbgorilla.llama_build.prove_llama` ran it."""
    import ctypes

    import llama_cpp  # noqa: F401  (loads libggml-base, which every CPU library links to)

    scores: dict[str, int] = {}
    for path in cpu_libraries():
        score = ctypes.CDLL(str(path)).ggml_backend_score
        score.restype = ctypes.c_int
        scores[_variant(path)] = score()
    return sorted((name for name, score in scores.items() if score > 0), key=lambda name: -scores[name])


def library_key() -> str:
    """Which CPU library a new process here loads (`load_cpu_backend`), as a name for what it computes: the
    one DBGORILLA_GGML_CPU names or a completion proved, else the best by score on this CPU, named by the CPU's
    fingerprint rather than loaded to find out; `native` for a build without variants. Libraries differ in
    the last bits of a logit, so a state one computed is not another's."""
    if not cpu_libraries():
        return "native"
    return os.environ.get(CPU_VARIANT_ENV) or proven_variant() or f"best-{fingerprint()}"


def fingerprint() -> str:
    """This CPU (model and flags as the kernel reports them) and this build's CPU libraries."""
    info = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    first = info.split("\n\n", 1)[0].splitlines()
    cpu = [line for line in first if line.startswith(("model name", "flags"))]
    libraries = [f"{path.name}:{path.stat().st_size}" for path in cpu_libraries()]
    return hashlib.sha256("\n".join(cpu + libraries).encode()).hexdigest()[:16]


def _proven_file() -> Path | None:
    libraries = cpu_libraries()
    return libraries[0].parent / "dbgorilla-proven-cpu.json" if libraries else None


def proven_variant() -> str | None:
    """The CPU library a real completion proved on this CPU with this build, if one did."""
    path = _proven_file()
    try:
        return json.loads(path.read_text()).get(fingerprint()) if path else None
    except (OSError, ValueError):
        return None


def record_proven(variant: str) -> None:
    """Keep the proved CPU library beside the libraries (a rebuild or another CPU proves again)."""
    path = _proven_file()
    if path is None:
        return
    try:
        known = json.loads(path.read_text()) if path.exists() else {}
    except ValueError:
        known = {}
    known[fingerprint()] = variant
    with contextlib.suppress(OSError):  # a read-only install: DBGORILLA_GGML_CPU names the library instead
        path.write_text(json.dumps(known, indent=1))


@functools.cache
def load_cpu_backend() -> str:
    """Load llama.cpp's CPU code for this CPU; returns which (`native` for a build without variants).

    llama-cpp-python does not call ggml's loader, so this loads one library of a portable build:
    the one named by DBGORILLA_GGML_CPU, else the one a real completion proved here, else the
    best by ggml's score."""
    import ctypes

    import llama_cpp

    variants = {_variant(path): path for path in cpu_libraries()}
    if not variants:
        return "native"
    wanted = os.environ.get(CPU_VARIANT_ENV) or proven_variant()
    if wanted and wanted not in variants:
        raise RuntimeError(f"{CPU_VARIANT_ENV}={wanted} names no llama.cpp CPU library; there are {sorted(variants)}")
    ranked = ranked_variants()
    chosen = wanted or (ranked[0] if ranked else None)
    if chosen is None:
        raise RuntimeError(f"no llama.cpp CPU library of {sorted(variants)} runs on this CPU")
    lib = Path(llama_cpp.__file__).parent / "lib"
    ggml = ctypes.CDLL(str(_loaded("libggml.so") or lib / "libggml.so.0"))
    ggml.ggml_backend_load.restype = ctypes.c_void_p
    ggml.ggml_backend_load.argtypes = [ctypes.c_char_p]
    if not ggml.ggml_backend_load(str(variants[chosen]).encode()):
        raise RuntimeError(f"llama.cpp could not load its CPU library {variants[chosen]}")
    return chosen


def _variant(path: Path) -> str:
    return path.stem.removeprefix("libggml-cpu-")


def _loaded(name: str) -> Path | None:
    """The file of `name` this process already loaded: the wheel holds copies (`libggml.so`,
    `.so.0`, …), and loading another copy would start a second, empty backend registry."""
    try:
        maps = Path("/proc/self/maps").read_text().splitlines()
    except OSError:
        return None
    for line in maps:
        path = line.split()[-1] if "/" in line else ""
        if Path(path).name.startswith(name):
            return Path(path)
    return None
