"""Precision and recall of the search's relevance cut against the generator's topic labels.

Offline: the objects come from the generator and are embedded in-process with the same MiniLM model
Weaviate's vectorizer calls (the text it embeds is `CollectionSpec.vector_text`, checked against
stored vectors), so no server is needed. For every paraphrased topic query in
`fixtures/data/topic_queries.json`, the objects within a cosine distance `cut` are compared with the
objects of that topic; the means over queries are printed per cut and size, side by side:

    .venv/bin/python benchmarks/search_relevance.py --sizes 100 1000 --cuts 0.55 0.6 0.65 0.7
"""

from __future__ import annotations

import argparse
import json
import statistics

import numpy as np

from executors.options import SEARCH_MAX_DISTANCE
from fixtures import DEFAULT_SEED, ObjectGenerator, get_use_cases
from fixtures.use_cases import DATA_DIR
from llm.encoder import MiniLMEncoder


def unit(vectors: list[list[float]]) -> np.ndarray:
    array = np.asarray(vectors, dtype=np.float64)
    return array / np.linalg.norm(array, axis=1, keepdims=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--cuts", type=float, nargs="+", default=[0.55, 0.6, 0.65, 0.7])
    args = parser.parse_args()
    queries = json.loads((DATA_DIR / "topic_queries.json").read_text())
    specs = {c.name: c for u in get_use_cases() for c in u.collections}
    encoder = MiniLMEncoder()
    count = sum(len(texts) for topics in queries.values() for texts in topics.values())
    print(f"{'objects':>8} {'cut':>5} {'precision':>9} {'recall':>7} {'F1':>5} {'hits':>6}  ({count} queries)")
    use_case_of = {c.name: u.name for u in get_use_cases() for c in u.collections}
    per_use_case: dict[tuple[int, str], list[tuple[float, float]]] = {}
    for size in args.sizes:
        rows: dict[float, list[tuple[float, float, float, int]]] = {cut: [] for cut in args.cuts}
        for name, topics in queries.items():
            spec = specs[name]
            objects = list(ObjectGenerator(spec, DEFAULT_SEED).stream(size))
            vectors = unit(encoder.encode([spec.vector_text(o.properties) for o in objects]))
            for topic, texts in topics.items():
                relevant = np.array([o.topic == topic for o in objects])
                for text in texts:
                    distances = 1 - vectors @ unit(encoder.encode([text]))[0]
                    for cut in args.cuts:
                        hits = distances <= cut
                        tp = int((hits & relevant).sum())
                        precision = tp / int(hits.sum()) if hits.any() else 0.0
                        recall = tp / int(relevant.sum())
                        f1 = 2 * precision * recall / (precision + recall) if tp else 0.0
                        rows[cut].append((precision, recall, f1, int(hits.sum())))
                        if cut == SEARCH_MAX_DISTANCE:
                            per_use_case.setdefault((size, use_case_of[name]), []).append((precision, recall))
        for cut, values in rows.items():
            p, r, f, h = (statistics.mean(v[i] for v in values) for i in range(4))
            print(f"{size:>8} {cut:>5.2f} {p:>9.2f} {r:>7.2f} {f:>5.2f} {h:>6.1f}")

    if per_use_case:
        print(f"\nper use case at the cut {SEARCH_MAX_DISTANCE:g}:")
        print(f"{'objects':>8} {'use case':<16} {'precision':>9} {'recall':>7} {'queries':>7}")
        for (size, use_case), pairs in sorted(per_use_case.items()):
            p = statistics.mean(x for x, _ in pairs)
            r = statistics.mean(y for _, y in pairs)
            print(f"{size:>8} {use_case:<16} {p:>9.2f} {r:>7.2f} {len(pairs):>7}")


if __name__ == "__main__":
    main()
