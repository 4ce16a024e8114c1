"""The `--json` summaries of `eval` and `score` (and `summary.json`, `repeats.json`) as typed models.

`evaluation.summary.summarize` and `evaluation.statistics.repeat_summary` build plain dicts; these
models say what those dicts hold, so the JSON Schema files under docs/schemas are generated from a
model like every other output format (`python -m dbgorilla.schemas`). Every model forbids extra
keys: a test validates real summaries against them, so a key added to a summary without its field
here fails it, and the schema never drifts from what the commands print.

Rates are fractions in [0, 1]; None where nothing was there to rate. Execution keys are absent
from `score` without `--execute`. The published schemas allow keys they do not name (a later
version may add some); the models here do not, so adding one means describing it here.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class RateWithInterval(_Strict):
    """A pass rate with its Wilson 95% interval (`evaluation.statistics.rate_with_interval`)."""

    rate: float | None
    n: int
    interval: list[float] | None = Field(description="[low, high]; None without trials.")
    width: float | None


class PassRate(RateWithInterval):
    """The pass rate over the questions with a verdict (`evaluation.statistics.pass_rate`)."""

    unstable: int = Field(
        default=0, description="Questions unstable on this data: neither passed nor failed, not in `n`."
    )


class ProtocolScores(_Strict):
    """The headline numbers of one protocol (`evaluation.summary.core`)."""

    exact_match: float | None
    ast_score: float | None
    ast_score_lenient: float | None
    routing_accuracy: float | None
    execution_match_exact: float | None = None
    execution_match_subset: float | None = None
    execution_precision: float | None = None
    execution_recall: float | None = None
    execution_f1: float | None = None


class Labels(_Strict):
    """What the argument metrics scored on (`evaluation.evaluators.arguments.label_summary`): a ground
    truth that does not fit the schema is left out of every argument metric, with `--execute` or without."""

    valid: int = Field(description="Answerable questions whose ground truth fits the schema: every argument metric's.")
    excluded: int = Field(description="Questions left out of the argument metrics: their ground truth cannot run.")
    excluded_ids: list[str]
    excluded_by_reason: dict[str, int] = Field(description="The excluded, by the executor's error code.")


class Slice(_Strict):
    """One use case's or one complexity's scores, under each protocol."""

    cases: int
    first: ProtocolScores
    final: ProtocolScores
    answer_accuracy: float | None


class ComponentAccuracy(_Strict):
    cases: int = Field(description="Questions whose ground truth uses the component.")
    accuracy: float | None
    spurious: int = Field(description="Predictions that added the component where the ground truth has none.")


class Answers(_Strict):
    accuracy: float | None = Field(description="Final answers right, over the questions with an answer key.")
    keyed_cases: int
    unscored_cases: int
    gold_calls_reached: float | None
    all_gold_calls_reached: float | None


class Abstention(_Strict):
    cases: int
    accuracy: RateWithInterval
    by_reason: dict[str, float | None]
    without_a_call: int
    answers_to_answerable: int
    false_refusals: int
    false_refusal_rate: float | None


class Trajectories(_Strict):
    counts: dict[str, int]
    failed_calls_per_question: float | None
    redundant_calls_per_question: float | None


class Citations(_Strict):
    answers_citing: int
    precision: float | None
    ids_cited: int
    ids_received: int
    micro_precision: float | None


class Contract(_Strict):
    """The structured final answer (`agent.answer`): how often a model committed one, and its cost."""

    commit_turns: int
    committed: int
    commit_rate: float | None
    commit_errors: dict[str, int]
    graded_cases: int
    answer_right_with_contract: float | None
    answer_right_without_contract: float | None
    commit_prompt_tokens: float | None
    commit_new_prompt_tokens: float | None
    commit_completion_tokens: float | None
    commit_latency_s: float | None


class TokensPerCase(_Strict):
    prompt: float | None
    new_prompt: float | None = Field(description="Prompt tokens the endpoint did not reuse from its cache.")
    completion: float | None


class Diagnostics(_Strict):
    any_call_execution_exact: float | None
    avg_calls_made: float | None


class DisagreementExample(_Strict):
    id: str
    query: str
    ground_truth: dict[str, Any]
    prediction: list[dict[str, Any] | None]


class Disagreement(_Strict):
    cases: int
    argument_match_but_execution_differs: int
    execution_match_but_arguments_differ: int
    rate: float | None
    examples_argument_only: list[DisagreementExample]
    examples_execution_only: list[DisagreementExample]


class ProtocolBlocks(_Strict):
    first: ProtocolScores
    final: ProtocolScores


class ComponentBlocks(_Strict):
    first: dict[str, ComponentAccuracy]
    final: dict[str, ComponentAccuracy]


class DisagreementBlocks(_Strict):
    first: Disagreement
    final: Disagreement


class RunSummary(_Strict):
    """`dbgorilla eval --json` (one repeat), `dbgorilla score --json` and `RUN_DIR/summary.json`."""

    cases: int
    infrastructure_failures: int
    infrastructure_failure: bool = Field(
        description="Every case failed on the infrastructure: the zeros are not scores."
    )
    answerable_cases: int
    protocols: ProtocolBlocks
    no_tool_rate: float | None
    exact_match_as_written: float | None
    search_similarity: float | None
    labels: Labels
    avg_calls_made: float | None
    avg_steps: float | None
    avg_corrections: float | None
    recovered_text_call_rate: float | None
    answers: Answers
    by_use_case: dict[str, Slice]
    by_complexity: dict[str, Slice]
    by_component: ComponentBlocks
    execution_scored_cases: int | None = None
    vacuous_ground_truths: dict[str, int] | None = None
    ground_truth_errors: int | None = None
    #: Questions unstable on this data (`evaluation.search_cut`): not execution-scored, not in the pass rate.
    unstable: list[str] | None = None
    #: Search questions run at a cut other than the default on this data.
    moved_search_cuts: int | None = None
    scoring_errors: int | None = None
    diagnostics: Diagnostics | None = None
    disagreement: DisagreementBlocks | None = None
    outcomes: dict[str, int]
    prompt_tokens: int
    completion_tokens: int
    tokens_per_case: TokensPerCase
    latency_p50_s: float | None
    latency_p95_s: float | None
    models: list[str]
    tool_designs: list[str]
    abstention: Abstention
    trajectories: Trajectories
    citations: Citations
    contract: Contract | None = None
    passed: PassRate | None = Field(
        default=None,
        alias="pass",
        description="`eval` only: questions passed (`evaluation.statistics.pass_rate`), unstable ones left out.",
    )


class UseCaseRepeats(_Strict):
    questions: int
    pass_at_1: float | None = Field(alias="pass@1")
    pass_hat_k: float | None = Field(alias="pass^k")


class RepeatSummary(_Strict):
    """`RUN_DIR/repeats.json`: pass@1 and pass^k over K repeats (`evaluation.statistics.repeat_summary`)."""

    repeats: int
    questions: int
    runs: list[RateWithInterval]
    pass_at_1: float | None = Field(alias="pass@1")
    pass_hat_k: RateWithInterval = Field(alias="pass^k")
    flaky: list[str] = Field(description="Questions whose verdict differs between repeats.")
    by_use_case: dict[str, UseCaseRepeats]


class RepeatedEval(_Strict):
    """`dbgorilla eval --repeats K --json` (K > 1): the repeats' verdicts and each repeat's summary."""

    repeats: RepeatSummary
    summaries: list[RunSummary]
