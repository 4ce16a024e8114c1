"""Canonical batches (`dbgorilla.llm_server.canonical`) without a model: which batches a prompt is evaluated in.

Each prompt row must be computed in a batch of at least `MIN_BATCH` rows whose count is a multiple of `ROWS`,
after a prefix computed so too, whatever the KV cache held before; tests/model/test_canonical_batches.py
shows that such batches give a row's logits to the last bit on the CPU library this machine loads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy
import pytest

from dbgorilla.llm_server import canonical
from dbgorilla.llm_server.canonical import MIN_BATCH, ROWS


@dataclass
class FakeBatch:
    logits: list[bool] = field(default_factory=list)


@dataclass
class FakeWrapper:
    batch: FakeBatch = field(default_factory=FakeBatch)
    tokens: list[int] = field(default_factory=list)
    n_past: int = 0

    def set_batch(self, batch: list[int], n_past: int, logits_all: bool) -> None:
        self.tokens, self.n_past = list(batch), n_past
        self.batch.logits = [False] * (len(batch) - 1) + [True]


@dataclass
class FakeContext:
    owner: FakeLlama

    def kv_cache_seq_rm(self, seq: int, start: int, end: int) -> bool:
        self.owner.kv = self.owner.kv[:start]
        return True

    def decode(self, wrapper: FakeWrapper) -> None:
        assert len(self.owner.kv) == wrapper.n_past, "a batch must follow the positions the cache holds"
        self.owner.decoded.append((wrapper.n_past, list(wrapper.tokens), list(wrapper.batch.logits)))
        self.owner.kv = self.owner.kv + list(wrapper.tokens)


class FakeLlama:
    """llama-cpp-python's state as `canonical` reads and writes it; `kv` is what the cache holds."""

    def __init__(self, n_batch: int = 512) -> None:
        self.n_batch = n_batch
        self._n_ctx = 4096
        self.n_tokens = 0
        self.input_ids = numpy.zeros(4096, dtype=numpy.intc)
        self._batch = FakeWrapper()
        self._ctx = FakeContext(self)
        self._requires_eval = True
        self.kv: list[int] = []
        self.decoded: list[tuple[int, list[int], list[bool]]] = []


def prompt(length: int, seed: int = 0) -> list[int]:
    return [(seed * 7919 + i * 31) % 1000 + 1 for i in range(length)]


def assert_canonical(llama: FakeLlama, tokens: list[int]) -> None:
    for _, batch, _ in llama.decoded:
        assert len(batch) >= MIN_BATCH and len(batch) % ROWS == 0, len(batch)
    assert llama.n_tokens == len(tokens) and llama.kv == tokens, "the padding's rows are dropped"
    assert list(llama.input_ids[: len(tokens)]) == tokens
    assert canonical.upto(llama) == len(tokens)


@pytest.mark.parametrize("length", [1, 5, 63, 64, 66, 129, 301, 509, 510, 515, 600, 1100])
def test_a_prompt_from_nothing_is_evaluated_in_canonical_batches_its_last_row_s_logits_kept(length: int) -> None:
    llama, tokens = FakeLlama(), prompt(length)
    assert canonical.prepare(llama, tokens, held=0) == 0
    assert_canonical(llama, tokens)
    start, _, logits = llama.decoded[-1]
    assert logits.count(True) == 1 and logits.index(True) == length - 1 - start
    assert all(not any(flags) for _, _, flags in llama.decoded[:-1])
    assert llama._requires_eval is False  # llama-cpp-python samples from these logits, evaluating nothing


def test_a_later_prompt_reuses_canonical_rows_and_moves_back_over_them_when_few_are_new() -> None:
    llama, first = FakeLlama(), prompt(300)
    canonical.prepare(llama, first, held=0)
    longer = first + prompt(200, seed=1)
    llama.decoded.clear()
    assert canonical.prepare(llama, longer, held=300) == 300
    assert [start for start, _, _ in llama.decoded] == [300]
    assert_canonical(llama, longer)
    few = longer + prompt(10, seed=2)
    llama.decoded.clear()
    assert canonical.prepare(llama, few, held=500) == len(few) - MIN_BATCH  # 54 rows evaluated again
    assert_canonical(llama, few)


def test_a_reply_s_rows_are_never_reused() -> None:
    """Decoded one at a time (or with a draft), a reply's rows are not canonical: the next prompt that shares
    them evaluates them again."""
    llama, tokens = FakeLlama(), prompt(200)
    canonical.prepare(llama, tokens, held=0)
    reply = prompt(30, seed=3)
    llama.input_ids[200:230] = reply
    llama.kv, llama.n_tokens = llama.kv + reply, 230  # as the model's own generation leaves it
    following = tokens + reply + prompt(100, seed=4)
    assert canonical.prepare(llama, following, held=230) == 200
    assert_canonical(llama, following)


def test_a_state_that_is_not_canonical_is_evaluated_again() -> None:
    llama, tokens = FakeLlama(), prompt(300)
    llama.kv, llama.n_tokens = tokens[:250], 250  # rows computed another way (a server without it)
    llama.input_ids[:250] = tokens[:250]
    assert canonical.prepare(llama, tokens, held=250) == 0
    assert_canonical(llama, tokens)


def test_a_prefix_evaluated_alone_is_canonical_up_to_its_end() -> None:
    """The system turn stored by itself: its state holds canonical rows to its end, the padding dropped."""
    llama, tokens = FakeLlama(), prompt(400)
    canonical.evaluate(llama, tokens, 0, 250)
    assert llama.kv == tokens[:250] and canonical.upto(llama) == 250
    assert all(not any(flags) for _, _, flags in llama.decoded)


@pytest.mark.parametrize(("argv", "on"), [([], False), (["--canonical=1", "-x"], True), (["--canonical=0"], False)])
def test_the_server_option(argv: list[str], on: bool) -> None:
    assert canonical.option(argv) == (on, [a for a in argv if not a.startswith("--canonical")])


def test_a_bad_option_is_refused() -> None:
    with pytest.raises(SystemExit, match="expected 1"):
        canonical.option(["--canonical=yes"])


def test_a_prompt_at_the_context_s_end_is_padded_only_as_far_as_the_context_goes() -> None:
    llama, tokens = FakeLlama(), prompt(30)
    llama._n_ctx = 40
    canonical.prepare(llama, tokens, held=0)
    assert [len(batch) for _, batch, _ in llama.decoded] == [40] and llama.kv == tokens


def test_each_cpu_library_keeps_its_canonical_states_apart(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A state the `zen4` library computed differs in the last bits from `haswell`'s: loaded by a server on
    the other, a reply would again depend on what ran before. Each library has its own folder."""
    from agent.llama_cpu import CPU_VARIANT_ENV, cpu_libraries
    from dbgorilla.config import Settings
    from dbgorilla.local_models import SMOLLM2, ModelService

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    folders = {}
    for library in ("haswell", "x64"):
        monkeypatch.setenv(CPU_VARIANT_ENV, library)
        folders[library] = ModelService(Settings(), SMOLLM2).prompt_cache_dir
    assert folders["haswell"].parent == folders["x64"].parent and folders["haswell"].parent.name == "canonical"
    assert folders["haswell"] != folders["x64"] or not cpu_libraries()
