"""The portable build's CPU levels: the ones this CPU's flags allow (x64 always), the sdist's x86 list cut
to them, ARM's untouched, and a layout that lacks a chosen level, or builds it for other instruction sets,
refused rather than built."""

from __future__ import annotations

from pathlib import Path

import pytest

from dbgorilla.errors import BuildFailed
from dbgorilla.llama_build import CPU_VARIANTS, LEVELS_ENV, _patch_variants, cpu_flags, levels_for, wheel_dir

CMAKE = """
if (GGML_CPU_ALL_VARIANTS)
    if (GGML_SYSTEM_ARCH STREQUAL "x86")
        ggml_add_cpu_backend_variant(x64)
        ggml_add_cpu_backend_variant(sse42              SSE42)
        ggml_add_cpu_backend_variant(haswell            SSE42 AVX F16C FMA AVX2 BMI2)
        ggml_add_cpu_backend_variant(skylakex           SSE42 AVX F16C FMA AVX2 BMI2 AVX512)
        ggml_add_cpu_backend_variant(icelake            SSE42 AVX F16C FMA AVX2 BMI2 AVX512 AVX512_VBMI AVX512_VNNI)
        if (NOT MSVC)
            ggml_add_cpu_backend_variant(zen4           SSE42 AVX F16C FMA AVX2 BMI2 AVX512 AVX512_VBMI AVX512_VNNI AVX512_BF16)
        endif()
        ggml_add_cpu_backend_variant(alderlake          SSE42 AVX F16C FMA AVX2 BMI2 AVX_VNNI)
    elseif(GGML_SYSTEM_ARCH STREQUAL "ARM")
            ggml_add_cpu_backend_variant(armv8.0_1)
            ggml_add_cpu_backend_variant(x64_lookalike    DOTPROD)
    endif()
endif()
"""


def sdist(tmp_path: Path, text: str) -> Path:
    cmake = tmp_path / "vendor" / "llama.cpp" / "ggml" / "src" / "CMakeLists.txt"
    cmake.parent.mkdir(parents=True)
    cmake.write_text(text)
    return tmp_path


def test_only_the_chosen_x86_levels_are_left(tmp_path: Path) -> None:
    source = sdist(tmp_path, CMAKE)
    assert _patch_variants(source) == ["sse42", "alderlake"]
    text = (source / "vendor/llama.cpp/ggml/src/CMakeLists.txt").read_text()
    for level in CPU_VARIANTS:
        assert f"ggml_add_cpu_backend_variant({level} " in text or f"ggml_add_cpu_backend_variant({level})" in text
    assert "sse42" not in text and "alderlake" not in text
    assert "x64_lookalike" in text and "armv8.0_1" in text  # other architectures untouched


def test_a_layout_without_a_chosen_level_is_refused(tmp_path: Path) -> None:
    source = sdist(tmp_path, CMAKE.replace("ggml_add_cpu_backend_variant(zen4", "ggml_add_cpu_backend_variant(zen5"))
    with pytest.raises(BuildFailed, match="zen4"):
        _patch_variants(source)


def test_a_missing_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BuildFailed, match="missing"):
        _patch_variants(tmp_path)


#: An AVX2 EPYC's flags (Zen 2), and a Zen 4's, as /proc/cpuinfo lists them (abridged).
ZEN2 = "fpu sse sse2 ssse3 fma cx16 sse4_1 sse4_2 movbe popcnt aes xsave avx f16c rdrand bmi1 avx2 bmi2 sha_ni"
ZEN4 = ZEN2 + " avx512f avx512dq avx512cd avx512bw avx512vl avx512vbmi avx512_vnni avx512_bf16 avx512_vbmi2"


def test_an_avx2_cpu_builds_two_levels_and_a_zen4_every_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(LEVELS_ENV, raising=False)
    info = tmp_path / "cpuinfo"
    info.write_text(f"processor\t: 0\nmodel name\t: AMD EPYC\nflags\t\t: {ZEN2}\n\n")
    assert levels_for(cpu_flags(info)) == ("x64", "haswell")
    assert levels_for(frozenset(ZEN4.split())) == CPU_VARIANTS
    skylake_without_bw = frozenset((ZEN2 + " avx512f avx512cd avx512vl avx512dq").split())
    assert levels_for(skylake_without_bw) == ("x64", "haswell")  # ggml compiles AVX512 with -mavx512bw too
    assert levels_for(frozenset({"sse2"})) == ("x64",) and levels_for(None) == CPU_VARIANTS
    assert cpu_flags(tmp_path / "nowhere") is None
    monkeypatch.setenv(LEVELS_ENV, "all")
    assert levels_for(frozenset(ZEN2.split())) == CPU_VARIANTS
    monkeypatch.setenv(LEVELS_ENV, "haswell")  # what an AVX2 machine builds, on any machine
    assert levels_for(frozenset(ZEN4.split())) == ("x64", "haswell")
    monkeypatch.setenv(LEVELS_ENV, "x64,sapphirerapids")
    with pytest.raises(BuildFailed, match="sapphirerapids"):
        levels_for(None)
    # the levels are part of the cache's name: a cache moved to a CPU they do not cover builds again
    assert wheel_dir(levels=("x64", "haswell")) != wheel_dir()


def test_the_two_levels_of_an_avx2_cpu_are_cut_from_the_sdist(tmp_path: Path) -> None:
    source = sdist(tmp_path, CMAKE)
    assert _patch_variants(source, ("x64", "haswell")) == ["sse42", "skylakex", "icelake", "zen4", "alderlake"]


def test_a_level_built_for_other_instruction_sets_is_refused(tmp_path: Path) -> None:
    moved = CMAKE.replace("haswell            SSE42 AVX F16C FMA AVX2 BMI2)", "haswell            SSE42 AVX AVX2)")
    with pytest.raises(BuildFailed, match="haswell"):
        _patch_variants(sdist(tmp_path, moved))
