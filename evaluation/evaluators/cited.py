"""Citations: the object ids the final answer (and its committed sources) cites, and the share of them
in a result the run received (`agent.citations`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agent.citations import check_citations, received_uuids
from evaluation.columns import Column
from evaluation.evaluators.base import Evaluator, Results, ScoreContext, mean
from evaluation.records import EvalRecord
from executors import SHORT_ID_CHARS


def cited_text(record: EvalRecord) -> str:
    """The prose answer and the committed sources: everything the answer cites."""
    committed = record.committed_answer
    sources = " ".join(f"[{s}]" if len(s) == SHORT_ID_CHARS else s for s in committed.sources) if committed else ""
    return f"{record.final_answer or ''} {sources}".strip()


class Citations(Evaluator):
    name = "citations"
    columns = (Column("citation_precision", "Citation precision", "rate"),)
    kind_columns = (
        Column("citing", "Answers citing objects", "int"),
        Column("citation_precision", "Citation precision", "rate"),
    )
    caption = "Citation precision = of the object ids an answer cites, the share in a result the agent received."

    def evaluate(self, ctx: ScoreContext) -> Results:
        record = ctx.record
        cited = check_citations(cited_text(record), received_uuids(c.result for c in record.predicted_calls))
        return {
            "citations": len(cited.cited),
            "citations_received": len(cited.received),
            "citation_precision": cited.precision,
        }

    def overall(self, records: Sequence[EvalRecord]) -> dict[str, Any]:
        return {"citations": citation_summary(records)}

    def leaderboard_values(self, summary: Mapping[str, Any]) -> dict[str, Any]:
        return {"citation_precision": (summary.get("citations") or {}).get("precision")}

    def kind_values(self, records: Sequence[EvalRecord]) -> dict[str, Any]:
        cited = [r.scores.citation_precision for r in records if r.scores.citation_precision is not None]
        return {"citing": len(cited), "citation_precision": sum(cited) / len(cited) if cited else None}


def citation_summary(records: Sequence[EvalRecord]) -> dict[str, Any]:
    """How many answers cite objects, and how precisely: the mean per citing answer and over all ids."""
    citing = [r for r in records if r.scores.citation_precision is not None]
    cited = sum(r.scores.citations for r in citing)
    received = sum(r.scores.citations_received for r in citing)
    return {
        "answers_citing": len(citing),
        "precision": mean(r.scores.citation_precision or 0.0 for r in citing),
        "ids_cited": cited,
        "ids_received": received,
        "micro_precision": round(received / cited, 6) if cited else None,
    }
