"""The ONNX MiniLM encoder and its text2vec-transformers HTTP API, served by a real uvicorn."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import numpy as np
import pytest

from dbgorilla.services import EmbedderService
from llm.encoder import DIMENSIONS, MiniLMEncoder
from tests.conftest import fresh_settings


@pytest.fixture(scope="module")
def encoder() -> MiniLMEncoder:
    return MiniLMEncoder()


def test_vectors_are_unit_length_and_384_wide(encoder: MiniLMEncoder) -> None:
    vectors = encoder.encode(["a bowl of ramen", "", "x " * 1000])
    assert vectors.shape == (3, DIMENSIONS)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)


def test_similar_sentences_are_closer(encoder: MiniLMEncoder) -> None:
    query, close, far = encoder.encode(
        ["cheap vegan lunch", "affordable plant-based midday meal", "oil painting of a stormy sea"]
    )
    assert float(query @ close) > float(query @ far) + 0.2


def test_batching_does_not_change_a_vector(encoder: MiniLMEncoder) -> None:
    alone = encoder.encode(["short"])[0]
    padded = encoder.encode(["short", "a much longer sentence that forces padding of the first one"])[0]
    assert float(alone @ padded) > 0.9999


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbedderService]:
    embedder = EmbedderService(fresh_settings(tmp_path_factory.mktemp("embedder")))
    embedder.start(echo=lambda _: None)
    yield embedder
    embedder.stop(echo=lambda _: None)


def test_http_contract_matches_weaviate_module_client(service: EmbedderService) -> None:
    assert httpx.get(service.url + "/.well-known/ready").status_code == 204
    assert httpx.get(service.url + "/meta").json()["model"]["_name_or_path"].endswith("all-MiniLM-L6-v2")
    body = {"text": "wood-fired pizza", "config": {"pooling_strategy": "masked_mean", "task_type": "passage"}}
    reply = httpx.post(service.url + "/vectors", json=body).json()
    assert reply["text"] == "wood-fired pizza" and reply["dims"] == DIMENSIONS and len(reply["vector"]) == DIMENSIONS


def test_bad_requests_get_an_error_field(service: EmbedderService) -> None:
    missing = httpx.post(service.url + "/vectors", json={"config": {}})
    assert missing.status_code == 400 and "text" in missing.json()["error"]
    garbage = httpx.post(service.url + "/vectors", content=b"{not json")
    assert garbage.status_code == 400 and "JSON" in garbage.json()["error"]


def test_concurrent_requests_are_micro_batched(service: EmbedderService) -> None:
    texts = [f"menu item number {i}" for i in range(64)]
    before = httpx.get(service.url + "/meta").json()
    with ThreadPoolExecutor(16) as pool:
        replies = list(pool.map(lambda t: httpx.post(service.url + "/vectors", json={"text": t}).json(), texts))
    after = httpx.get(service.url + "/meta").json()
    assert [r["text"] for r in replies] == texts
    assert after["texts_encoded"] - before["texts_encoded"] == 64
    assert after["batches_run"] - before["batches_run"] < 64, "some requests should share an ONNX run"
