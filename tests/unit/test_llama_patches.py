"""The model server's patches of llama-cpp-python say which upstream version they were read against; a
build that moves to another version must read them again (each patch replaces a method by name)."""

from __future__ import annotations

import importlib
import importlib.metadata

import pytest

from dbgorilla.llama_build import LLAMA_CPP_PYTHON_VERSION

PATCHES = ("dbgorilla.llm_server", "dbgorilla.llm_server.grammar", "dbgorilla.llm_server.speculative")


@pytest.mark.parametrize("module", PATCHES)
def test_each_patch_was_read_against_the_version_we_build(module: str) -> None:
    assert importlib.import_module(module).READ_AGAINST == LLAMA_CPP_PYTHON_VERSION


def test_the_installed_llama_cpp_python_is_the_one_the_patches_were_read_against() -> None:
    try:
        installed = importlib.metadata.version("llama-cpp-python")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("llama-cpp-python is not installed (the model tier's extra)")
    assert installed == LLAMA_CPP_PYTHON_VERSION, (
        f"llama-cpp-python {installed} is installed; the patches were read against {LLAMA_CPP_PYTHON_VERSION}"
    )
