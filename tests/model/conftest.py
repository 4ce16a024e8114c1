"""The model tier's shared fixture: the small test model loaded in this process."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest

from dbgorilla.local_models import SMOLLM2


@pytest.fixture(scope="module")
def llama() -> Iterator[Any]:
    """SmolLM2 through llama-cpp-python, with the CPU library this machine proved."""
    from llama_cpp import Llama

    from agent.llama_cpu import load_cpu_backend
    from agent.tokens import quiet_stderr

    load_cpu_backend()
    with quiet_stderr():
        model = Llama(model_path=str(SMOLLM2.gguf_path(echo=lambda _: None)), n_ctx=1024, verbose=False)
    yield model
    with contextlib.suppress(Exception):
        model.close()
