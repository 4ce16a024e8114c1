"""The vector-index check and rebuild on the session's Weaviate, on collections made for each test.

Breaking an HNSW graph needs a stopped server (see test_crash.py); what a running one can show is
an object without a vector, a page of exact duplicates, a sampled large collection, and a rebuild
that keeps ids, properties and vectors.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from weaviate.classes.config import Configure, DataType, Property

from dbgorilla.smoke import SMOKE_OBJECTS, create_smoke_collection
from executors.index_health import NEIGHBOURS, IndexBroken, check_index, require_healthy
from executors.ownership import NotOurCollection, mark
from fixtures.index_repair import rebuild_index, repair_broken

pytestmark = pytest.mark.integration


@pytest.fixture()
def made(client: Any) -> Iterator[list[str]]:
    names: list[str] = []
    yield names
    for name in names:
        client.collections.delete(name)


def self_vectors(
    client: Any, name: str, count: int, vectors: list[list[float]] | None = None, *, ours: bool = True
) -> Any:
    """A collection with no vectorizer holding `count` objects with the given vectors (or none);
    marked as the project's unless `ours` is False (only the project's own are ever rebuilt)."""
    collection = client.collections.create(
        name,
        description=mark("Test vectors.", "test") if ours else "Test vectors.",
        vector_config=Configure.Vectors.self_provided(),
        properties=[Property(name="label", data_type=DataType.TEXT)],
    )
    with collection.batch.fixed_size(batch_size=100) as batch:
        for i in range(count):
            batch.add_object(properties={"label": f"item {i}"}, vector=vectors[i] if vectors else None)
    assert not collection.batch.failed_objects
    return collection


def test_a_whole_index_passes_and_the_check_says_what_it_did(client: Any, made: list[str]) -> None:
    made.append("HealthSmoke")
    collection = create_smoke_collection(client, "HealthSmoke")
    report = check_index(collection)
    assert report.ok
    assert (report.objects, report.checked, report.found, report.without_vector) == (len(SMOKE_OBJECTS),) * 3 + (0,)
    # a collection that does not exist has no index to check
    assert [r.collection for r in require_healthy(client, ["HealthSmoke", "NoSuchCollection"])] == ["HealthSmoke"]


def test_objects_without_vectors_are_an_incomplete_index_that_a_rebuild_cannot_fix(
    client: Any, made: list[str]
) -> None:
    made.append("HealthNoVectors")
    self_vectors(client, "HealthNoVectors", 5)
    report = check_index(client.collections.use("HealthNoVectors"))
    assert not report.ok and report.without_vector == 5 and len(report.unfound) == 5
    with pytest.raises(IndexBroken, match="HealthNoVectors: 0/0 objects found themselves by vector, 5 have no vector"):
        require_healthy(client, ["HealthNoVectors"])
    with pytest.raises(IndexBroken, match="a rebuild did not help") as raised:
        repair_broken(client, ["HealthNoVectors"], echo=lambda _: None)
    assert raised.value.collections == ["HealthNoVectors"]


def test_a_collection_the_project_did_not_create_is_never_rebuilt(client: Any, made: list[str]) -> None:
    made.append("HealthForeign")
    self_vectors(client, "HealthForeign", 4, ours=False)  # no vectors: the check calls it incomplete
    before = [(str(o.uuid), o.properties) for o in client.collections.use("HealthForeign").iterator()]
    created = client.collections.export_config("HealthForeign").to_dict()
    with pytest.raises(NotOurCollection, match=r"refusing to rebuild the vector index of HealthForeign: .*4 objects"):
        repair_broken(client, ["HealthForeign"], echo=lambda _: None)
    assert client.collections.export_config("HealthForeign").to_dict() == created
    assert [(str(o.uuid), o.properties) for o in client.collections.use("HealthForeign").iterator()] == before


def test_a_page_of_exact_duplicates_is_a_tie_not_a_missing_object(client: Any, made: list[str]) -> None:
    made.append("HealthDuplicates")
    same = [1.0, 0.0, 0.0, 0.0]
    self_vectors(client, "HealthDuplicates", NEIGHBOURS + 5, [same] * (NEIGHBOURS + 5))
    report = check_index(client.collections.use("HealthDuplicates"))
    assert report.ok and report.found == NEIGHBOURS + 5


def test_a_large_collection_is_checked_on_a_spread_sample(client: Any, made: list[str]) -> None:
    made.append("HealthSampled")
    vectors = [[float(i), 1.0, float(i % 7), 2.0] for i in range(60)]
    self_vectors(client, "HealthSampled", 60, vectors)
    report = check_index(client.collections.use("HealthSampled"), limit=20)
    assert (report.objects, report.checked, report.found) == (60, 20, 20)


def test_a_rebuild_keeps_ids_properties_and_vectors(client: Any, made: list[str]) -> None:
    made.append("HealthRebuild")
    collection = create_smoke_collection(client, "HealthRebuild")
    before = {str(o.uuid): (o.properties, o.vector) for o in collection.iterator(include_vector=True)}
    repair = rebuild_index(client, "HealthRebuild")
    assert repair.after.ok and repair.reimported == len(SMOKE_OBJECTS) and repair.failed == 0
    fresh = client.collections.use("HealthRebuild")
    after = {str(o.uuid): (o.properties, o.vector) for o in fresh.iterator(include_vector=True)}
    assert after == before
    assert fresh.query.near_text("raw fish", limit=1).objects[0].properties["name"] == "Sakura Bar"
