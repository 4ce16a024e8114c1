"""The portable build's CPU levels: the sdist's x86 list cut to the chosen ones, ARM's untouched,
and a layout that lacks a chosen level refused rather than built."""

from __future__ import annotations

from pathlib import Path

import pytest

from dbgorilla.errors import BuildFailed
from dbgorilla.llama_build import CPU_VARIANTS, _patch_variants

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
