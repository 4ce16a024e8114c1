"""Build llama-cpp-python once, for any x86-64 CPU, and prove it answers before anything relies on it.

pip compiles llama.cpp from the sdist with `GGML_NATIVE=ON` by default: code for the build machine's
own CPU. On a 2-core VM whose CPU reports AVX-512 and AMX that build died with a general protection
fault on its first token, and a wheel cached by pip on one machine crashes on the next. So the
wheel is built here with `GGML_BACKEND_DL` and `GGML_CPU_ALL_VARIANTS`: llama.cpp's CPU code is
compiled once per instruction-set level as separate libraries, and `dbgorilla.llm_server` loads the
best one the running CPU supports. llama.cpp offers no option to build only some levels, and its 14
cost most of the compile, so the sdist's CMake list is cut before the build (`_patch_variants`,
checked: a layout it does not recognise, or a level whose instruction sets moved, fails the build,
named) to the levels of `CPU_VARIANTS` this CPU can run (`levels_for`, from the kernel's flags), with
`x64` always as the fallback: an AVX2 machine compiles two levels, not five. `DBGORILLA_LLAMA_LEVELS`
says otherwise: `all` for a cache shared with other CPUs, or the levels by name (`x64,haswell`). The
wheel is kept in our cache under a name that carries the build options and the levels, so a cache moved
to a CPU its levels do not cover builds again (a wheel of all five serves any CPU), and a native wheel
in pip's cache is never picked up by mistake. `prove_llama` runs one real completion in a child
process, so a build that crashes is named at set-up instead of showing up as scores of 0.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import re
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from agent.llama_cpu import CPU_VARIANT_ENV, cpu_libraries, ranked_variants, record_proven
from dbgorilla.config import cache_dir
from dbgorilla.errors import BuildFailed

#: The pinned llama-cpp-python (its sdist vendors a matching llama.cpp).
LLAMA_CPP_PYTHON_VERSION = "0.3.36"
#: Options of the portable build: no `-march=native`; one CPU library per instruction-set level,
#: chosen at run time; no multimodal library (the project serves text models only).
PORTABLE_CMAKE_ARGS = "-DGGML_NATIVE=OFF -DGGML_BACKEND_DL=ON -DGGML_CPU_ALL_VARIANTS=ON -DLLAVA_BUILD=OFF"
#: The CPU libraries built (of llama.cpp's 14 x86 levels): the baseline, AVX2 (Haswell and every AMD
#: Zen before Zen 4), AVX-512 (Skylake-SP, Cascade Lake), Ice Lake-SP and later Xeons, and Zen 4/5 (the
#: AMD EPYC this project runs on). A CPU between two levels runs the lower one; `prove_llama` checks.
CPU_VARIANTS = ("x64", "haswell", "skylakex", "icelake", "zen4")
#: The instruction sets each level is compiled for, as the pinned sdist's CMake names them
#: (`ggml/src/CMakeLists.txt`, read 2026-11-29 from llama-cpp-python 0.3.36; `_patch_variants` fails when
#: they move), and the kernel's `/proc/cpuinfo` flags each needs.
LEVEL_FEATURES = {
    "x64": (),
    "haswell": ("SSE42", "AVX", "F16C", "FMA", "AVX2", "BMI2"),
    "skylakex": ("SSE42", "AVX", "F16C", "FMA", "AVX2", "BMI2", "AVX512"),
    "icelake": ("SSE42", "AVX", "F16C", "FMA", "AVX2", "BMI2", "AVX512", "AVX512_VBMI", "AVX512_VNNI"),
    "zen4": ("SSE42", "AVX", "F16C", "FMA", "AVX2", "BMI2", "AVX512", "AVX512_VBMI", "AVX512_VNNI", "AVX512_BF16"),
}
KERNEL_FLAGS = {
    "SSE42": ("sse4_2",),
    "AVX": ("avx",),
    "F16C": ("f16c",),
    "FMA": ("fma",),
    "AVX2": ("avx2",),
    "BMI2": ("bmi2",),
    "AVX512": ("avx512f", "avx512cd", "avx512vl", "avx512dq", "avx512bw"),  # ggml's -mavx512* set
    "AVX512_VBMI": ("avx512vbmi",),
    "AVX512_VNNI": ("avx512_vnni",),
    "AVX512_BF16": ("avx512_bf16",),
}
#: `all` builds every level of `CPU_VARIANTS` whatever this CPU runs; `x64,haswell` those (x64 always).
LEVELS_ENV = "DBGORILLA_LLAMA_LEVELS"
#: The CPU library every portable build has (the x86-64 baseline); a native build has none.
BASELINE_CPU_LIBRARY = "libggml-cpu-x64.so"

Echo = Callable[[str], None]


def cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> frozenset[str] | None:
    """The instruction sets the kernel says this CPU runs (None where it says nothing: not Linux)."""
    try:
        text = cpuinfo.read_text()
    except OSError:
        return None
    line = next((line for line in text.splitlines() if line.startswith("flags")), None)
    return frozenset(line.split(":", 1)[1].split()) if line else None


def levels_for(flags: frozenset[str] | None) -> tuple[str, ...]:
    """The levels of `CPU_VARIANTS` a CPU with these flags runs, `x64` first (all of them when the
    flags are unknown). `DBGORILLA_LLAMA_LEVELS` overrides: `all`, or levels by name (`x64,haswell`)."""
    asked = os.environ.get(LEVELS_ENV, "").strip().lower()
    if asked == "all" or (flags is None and not asked):
        return CPU_VARIANTS
    if asked:
        named = [level.strip() for level in asked.split(",") if level.strip()]
        unknown = sorted(set(named) - set(CPU_VARIANTS))
        if unknown:
            raise BuildFailed(f"{LEVELS_ENV} names {unknown}; the levels are all, or some of {', '.join(CPU_VARIANTS)}")
        return ("x64", *[v for v in CPU_VARIANTS if v in named and v != "x64"])
    runs = [v for v in CPU_VARIANTS if all(f in flags for feat in LEVEL_FEATURES[v] for f in KERNEL_FLAGS[feat])]
    return ("x64", *[v for v in runs if v != "x64"])


def wheel_dir(
    version: str = LLAMA_CPP_PYTHON_VERSION,
    cmake_args: str = PORTABLE_CMAKE_ARGS,
    levels: tuple[str, ...] = CPU_VARIANTS,
) -> Path:
    """Where the wheel of this version, these options and these levels is kept (all part of the name)."""
    options = hashlib.sha256((cmake_args + " " + ",".join(levels)).encode()).hexdigest()[:10]
    return cache_dir() / "wheels" / f"llama-cpp-python-{version}-{options}"


def cached_wheel(version: str, levels: tuple[str, ...]) -> Path | None:
    """A wheel already built for these levels, or for all of them (it serves any CPU)."""
    for folder in dict.fromkeys((wheel_dir(version, levels=levels), wheel_dir(version))):
        wheels = sorted(folder.glob("llama_cpp_python-*.whl"))
        if wheels:
            return wheels[-1]
    return None


def llama_lib_dir() -> Path | None:
    """The installed `llama_cpp/lib` folder, or None when llama-cpp-python is not installed."""
    try:
        files = importlib.metadata.files("llama-cpp-python") or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for file in files:
        if file.parts[:2] == ("llama_cpp", "lib"):
            return Path(str(file.locate())).parent
    return None


def installed_is_portable(version: str = LLAMA_CPP_PYTHON_VERSION) -> bool:
    """True when the installed llama-cpp-python is this version and was built with runtime CPU dispatch."""
    try:
        installed = importlib.metadata.version("llama-cpp-python")
    except importlib.metadata.PackageNotFoundError:
        return False
    return installed == version and BASELINE_CPU_LIBRARY in {path.name for path in cpu_libraries()}


def _pip(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pip", *args]
    return subprocess.run(command, capture_output=True, text=True, env=env)


def _patch_variants(source: Path, keep: tuple[str, ...] = CPU_VARIANTS) -> list[str]:
    """Cut the x86 CPU levels of an unpacked llama-cpp-python sdist to `keep`; returns those dropped.

    Fails when the file is not where it was or not every kept level is in it, rather than build
    something other than what the docs say."""
    cmake = source / "vendor" / "llama.cpp" / "ggml" / "src" / "CMakeLists.txt"
    if not cmake.is_file():
        raise BuildFailed(f"cannot choose llama.cpp's CPU levels: {cmake} is missing")
    x86 = re.compile(r"^\s*ggml_add_cpu_backend_variant\((\w+)((?:\s+[A-Z0-9_ ]*)?)\)\s*$")
    lines, dropped, found = [], [], set()
    inside = False
    for line in cmake.read_text().splitlines(keepends=True):
        if 'GGML_SYSTEM_ARCH STREQUAL "x86"' in line and "GGML_CPU_ALL_VARIANTS" not in line:
            inside = True
        elif inside and "GGML_SYSTEM_ARCH STREQUAL" in line:
            inside = False
        match = x86.match(line) if inside else None
        if match and match.group(1) not in keep:
            dropped.append(match.group(1))
            continue
        if match:
            found.add(match.group(1))
            if tuple(match.group(2).split()) != LEVEL_FEATURES.get(match.group(1)):
                raise BuildFailed(
                    f"cannot choose llama.cpp's CPU levels: {cmake} builds {match.group(1)} for"
                    f" {match.group(2).split()}, not {list(LEVEL_FEATURES.get(match.group(1), ()))} (LEVEL_FEATURES)"
                )
        lines.append(line)
    if found != set(keep):
        raise BuildFailed(f"cannot choose llama.cpp's CPU levels: {cmake} lacks {sorted(set(keep) - found)}")
    cmake.write_text("".join(lines))
    return dropped


def build_wheel(version: str = LLAMA_CPP_PYTHON_VERSION, echo: Echo = print) -> Path:
    """The cached portable wheel for the levels this CPU runs, compiled first when it is missing (minutes
    on 2 cores)."""
    levels = levels_for(cpu_flags())
    cached = cached_wheel(version, levels)
    if cached is not None:
        return cached
    folder = wheel_dir(version, levels=levels)
    folder.mkdir(parents=True, exist_ok=True)
    minutes = "~10" if len(levels) > 2 else "~5"
    echo(
        f"compiling llama-cpp-python {version} for the x86-64 levels this CPU runs, {', '.join(levels)} "
        f"({PORTABLE_CMAKE_ARGS}; {LEVELS_ENV}=all builds all five); {minutes} min on 2 cores"
    )
    started = time.monotonic()
    env = {
        **os.environ,
        "CMAKE_ARGS": PORTABLE_CMAKE_ARGS,
        "FORCE_CMAKE": "1",
        "CMAKE_BUILD_PARALLEL_LEVEL": os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 1)),
    }
    with tempfile.TemporaryDirectory(prefix="llama-sdist-") as tmp:
        result = _pip(
            "download", "--quiet", "--no-deps", "--no-binary", ":all:", "-d", tmp, f"llama-cpp-python=={version}",
        )  # fmt: skip
        archives = sorted(Path(tmp).glob("llama_cpp_python-*.tar.gz"))
        if result.returncode != 0 or not archives:
            output = (result.stdout + result.stderr)[-3000:]
            raise BuildFailed(f"downloading the llama-cpp-python {version} sdist failed:\n{output}")
        with tarfile.open(archives[0]) as archive:
            archive.extractall(tmp, filter="data")
        source = Path(tmp) / archives[0].name.removesuffix(".tar.gz")
        _patch_variants(source, levels)
        result = _pip("wheel", "--quiet", "--no-deps", "--no-cache-dir", "-w", str(folder), str(source), env=env)
    wheels = sorted(folder.glob("llama_cpp_python-*.whl"))
    if result.returncode != 0 or not wheels:
        raise BuildFailed(f"building llama-cpp-python {version} failed:\n{(result.stdout + result.stderr)[-3000:]}")
    echo(f"built {wheels[-1].name} in {time.monotonic() - started:.0f} s")
    return wheels[-1]


def install_llama(version: str = LLAMA_CPP_PYTHON_VERSION, echo: Echo = print) -> str:
    """Install the portable llama-cpp-python[server] (built once, then from our cache); says what it did."""
    if installed_is_portable(version):
        return f"llama-cpp-python {version} (portable) already installed"
    wheel = build_wheel(version, echo)
    result = _pip(
        "install", "--quiet", "--force-reinstall", "--no-deps", str(wheel),
    )  # fmt: skip
    if result.returncode == 0:
        # Its own dependencies and the server's, from the index; the wheel itself stays ours.
        result = _pip("install", "--quiet", "--find-links", str(wheel.parent), "--only-binary", "llama-cpp-python",
                      f"llama-cpp-python[server]=={version}")  # fmt: skip
    if result.returncode != 0 or not installed_is_portable(version):
        raise BuildFailed(f"installing {wheel} failed:\n{(result.stdout + result.stderr)[-3000:]}")
    return f"llama-cpp-python {version} (portable) installed from {wheel}"


#: Run in a child process: load the backends as the server does, then one real token.
_PROOF = """
import sys
from agent.llama_cpu import load_cpu_backend
backend = load_cpu_backend()
import llama_cpp
llama = llama_cpp.Llama(model_path=sys.argv[1], n_ctx=256, n_threads=1, verbose=False)
out = llama.create_completion("The capital of France is", max_tokens=1, temperature=0.0)
print(backend, repr(out["choices"][0]["text"]))
"""


def prove_llama(model_path: Path, timeout: float = 300.0) -> str:
    """One real completion in a child process, per CPU library of a portable build from the best
    down, until one produces a token; that one is recorded and used from then on. A crash (a
    signal) or an error of every one, or of a native build, is a typed failure naming each."""
    variants = ranked_variants() if cpu_libraries() else []
    failures: list[str] = []
    last = ""
    for variant in variants or [None]:
        env = {**os.environ, **({CPU_VARIANT_ENV: variant} if variant else {})}
        try:
            result = subprocess.run(
                [sys.executable, "-c", _PROOF, str(model_path)],
                capture_output=True,
                text=True,
                timeout=timeout,
                env=env,
            )
        except subprocess.TimeoutExpired:
            failures.append(f"{variant or 'native'}: no token from {model_path.name} in {timeout:.0f} s")
            continue
        if result.returncode == 0:
            if variant:
                record_proven(variant)
            line = result.stdout.strip().splitlines()[-1]
            skipped = f" ({'; '.join(failures)})" if failures else ""
            return line + skipped
        failures.append(f"{variant or 'native'}: {describe_exit(result.returncode)}")
        last = _tail(result)
    raise BuildFailed("llama.cpp could not produce one token: " + "; ".join(failures) + f"\n{last}")


def describe_exit(code: int) -> str:
    """`-11` as `killed by SIGSEGV (signal 11)`: what a crash of compiled code looks like from outside."""
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = "signal"
        hint = " (compiled code crashed; a CPU-specific build does this on another CPU)" if -code in (4, 7, 11) else ""
        return f"killed by {name} (signal {-code}){hint}"
    return f"exit code {code}"


def _tail(result: subprocess.CompletedProcess[str], lines: int = 12) -> str:
    text = (result.stderr or result.stdout or "").strip().splitlines()
    return "\n".join(text[-lines:])
