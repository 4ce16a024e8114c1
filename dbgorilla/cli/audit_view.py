"""What `dbgorilla audit-dataset` prints: the audit of our splits' labels (`print_audit`, a table per part of
the report), of questions the tool cannot answer (`finish_abstention_audit`), and of a composed file over
the user's own collections (`print_own_audit`). The `--json` output is the report itself."""

from __future__ import annotations

import json

import typer
from rich.table import Table

from dbgorilla.cli.console import err, out
from dbgorilla.errors import ExitCode
from evaluation.audit import AuditReport
from evaluation.audit.answer_probes import CITING_RECEIVED
from evaluation.audit.own import OWN_TARGETS, OwnAudit
from evaluation.audit.probes import PROBE_LIMIT, PROBE_SCORES
from evaluation.audit.unanswerable import AbstentionAudit

#: Survivors shown in the readable output (all of them are in --json).
SHOWN_SURVIVORS = 60


def verdict(ok: bool) -> str:
    return "[green]ok[/]" if ok else "[red]missed[/]"


def print_audit(report: AuditReport) -> None:
    """Every part of our splits' audit, a table each; the long lists cut at `SHOWN_SURVIVORS`."""
    _summary(report)
    _mutations(report)
    _label_checks(report)
    _probes(report)
    _problems(report)


def _summary(report: AuditReport) -> None:
    targets = report.targets
    summary = Table("measure", "value", "target", "", title=f"{report.dataset} ({report.seconds:.1f}s)")
    summary.add_row("queries", str(report.queries), "", "")
    sizes = sorted({n for n in report.objects_per_collection.values() if n is not None})
    summary.add_row("objects per collection", ", ".join(str(n) for n in sizes) or "unknown", "", "")
    summary.add_row("invalid labels (not executed)", str(report.invalid_labels), "", "")
    summary.add_row(
        "execution errors",
        str(report.execution_errors),
        f"<= {targets['execution_errors']:g}",
        verdict(report.execution_errors <= targets["execution_errors"]),
    )
    summary.add_row(
        "non-vacuous rate",
        f"{report.non_vacuous_rate:.3f}",
        f">= {targets['non_vacuous_rate']:g}",
        verdict(report.non_vacuous_rate >= targets["non_vacuous_rate"]),
    )
    summary.add_row(
        "mutation sensitivity",
        f"{report.mutation_sensitivity:.3f} ({report.killed}/{report.mutants})",
        f">= {targets['mutation_sensitivity']:g}",
        verdict(report.mutation_sensitivity >= targets["mutation_sensitivity"]),
    )
    out.print(summary)


def _mutations(report: AuditReport) -> None:
    kinds = Table("mutation", "mutants", "killed", "survived", "sensitivity", "skipped (no valid alternative)")
    for kind, numbers in report.by_kind.items():
        rate = numbers.sensitivity
        kinds.add_row(
            kind,
            str(numbers.mutants),
            str(numbers.killed),
            str(numbers.mutants - numbers.killed),
            "" if rate is None else f"{rate:.3f}",
            str(numbers.skipped),
        )
    out.print(kinds)
    target = report.targets["component_sensitivity"]
    components = Table("component", "mutants", "killed", "sensitivity", "target")
    for component, numbers in report.by_component.items():
        rate = numbers.sensitivity
        ok = rate is None or rate >= target
        shown_rate = "" if rate is None else f"{rate:.3f} {verdict(ok)}"
        components.add_row(component, str(numbers.mutants), str(numbers.killed), shown_rate, f">= {target:g}")
    out.print(components)


def _label_checks(report: AuditReport) -> None:
    out.print(
        f"ties at a cut: {len(report.ties)} {verdict(not report.ties)}; alternatives checked: "
        f"{report.alternatives_checked}, disagreeing: {len(report.alternative_mismatches)} "
        f"{verdict(not report.alternative_mismatches)}",
        highlight=False,
    )
    unstable = report.unstable
    out.print(
        f"search cuts moved on this data: {len(report.search_cuts)}; unstable at this size (no stable result: "
        f"not audited, not scored, not held against the exit): {len(unstable)}",
        highlight=False,
    )
    for case_id, cut in sorted(report.search_cuts.items()):
        out.print(f"  cut {case_id}: {cut:.4f}", highlight=False)
    for item in unstable[:SHOWN_SURVIVORS]:
        out.print(f"  unstable {item.id}: {item.detail}", highlight=False)
    for tie in report.ties[:SHOWN_SURVIVORS]:
        out.print(f"  tie {tie.id} ({tie.kind}): {tie.detail}", highlight=False)
    for mismatch in report.alternative_mismatches[:SHOWN_SURVIVORS]:
        out.print(f"  alternative of {mismatch.id}: {mismatch.reason}", highlight=False)
    if report.search_relevance:
        relevance = Table("use case", "search labels", "precision", "recall", title="search hits vs generator topics")
        for use_case, numbers in report.search_relevance.items():
            relevance.add_row(use_case, str(numbers.queries), f"{numbers.precision:.3f}", f"{numbers.recall:.3f}")
        out.print(relevance)


def _probes(report: AuditReport) -> None:
    if report.probes:
        title = f"gameability probes: share earning exact / exec exact / exec subset (at most {PROBE_LIMIT:g}; gold 1)"
        probes = Table(title=title)
        probes.add_column("probe", no_wrap=True)
        probes.add_column("n", justify="right")
        probes.add_column("first", no_wrap=True)
        probes.add_column("final", no_wrap=True)
        probes.add_column("")
        for name, summary in report.probes.items():
            if not summary.predictions:
                continue
            rates = ["/".join(f"{summary.rates[p][k]:.3f}" for k in PROBE_SCORES) for p in ("first", "final")]
            ok = summary.least == 1.0 if name == "gold" else summary.worst <= PROBE_LIMIT
            probes.add_row(name, str(summary.questions), *rates, verdict(ok))
        out.print(probes)
    if report.answer_probes:
        answers = Table("probe", "questions", "answer graded right", "", title="final-answer probes (gold 1, others 0)")
        for name, rate in report.answer_probes.items():
            ok = rate["right"] == 1.0 if name == "gold" else rate["right"] <= PROBE_LIMIT
            answers.add_row(name, str(rate["questions"]), f"{rate['right']:.3f}", verdict(ok))
        out.print(answers)
    if report.citation_probes:
        cited = Table("probe", "questions", "citation precision", "", title="citation probes (received 1, others 0)")
        for name, rate in report.citation_probes.items():
            ok = rate["precision"] == 1.0 if name in CITING_RECEIVED else rate["precision"] <= PROBE_LIMIT
            cited.add_row(name, str(rate["questions"]), f"{rate['precision']:.3f}", verdict(ok))
        out.print(cited)


def _problems(report: AuditReport) -> None:
    for issue in report.chain_issues[:SHOWN_SURVIVORS]:
        out.print(f"  chain: {issue}", highlight=False)
    listed = (
        ("execution errors", ("id", "code", "message"), [(f.id, f.code, f.message) for f in report.errors]),
        ("vacuous ground truths", ("id", "reason"), [(v.id, v.reason) for v in report.vacuous]),
        (
            "mutants that failed to execute (not counted)",
            ("id", "mutation", "code", "message"),
            [(f.id, f.mutation, f.code, f.message) for f in report.mutant_errors],
        ),
    )
    for title, columns, rows in listed:
        if rows:
            table = Table(*columns, title=title)
            for row in rows:
                table.add_row(*row)
            out.print(table)
    if report.survivors:
        shown = report.survivors[:SHOWN_SURVIVORS]
        title = f"survivors: mutants the eval cannot tell from the label ({len(report.survivors)})"
        table = Table(title=title)
        table.add_column("id", no_wrap=True)
        table.add_column("mutation", overflow="fold")
        table.add_column("mutant arguments", overflow="fold")
        for survivor in shown:
            table.add_row(survivor.id, survivor.mutation, json.dumps(survivor.arguments, separators=(",", ":")))
        out.print(table)
        if len(report.survivors) > len(shown):
            out.print(f"... and {len(report.survivors) - len(shown)} more (see --json)")


def finish_abstention_audit(report: AbstentionAudit, as_json: bool) -> None:
    """The probes of questions the tool cannot answer; exit 1 when a target is missed."""
    if as_json:
        print(json.dumps(report.model_dump(mode="json") | {"ok": report.ok}))
    else:
        table = Table("probe", "passed", "target", title=f"{report.dataset}: {report.questions} questions")
        for name, rate in report.probes.items():
            table.add_row(name, f"{rate:.3f}", "1" if name == "gold" else f"<= {PROBE_LIMIT:g}")
        out.print(table)
        reasons = ", ".join(f"{k} {v}" for k, v in report.by_reason.items())
        out.print(f"reasons: {reasons}; evidence issues: {len(report.issues)} ({report.seconds:.1f}s)", highlight=False)
    _exit_on(report.failed_targets)


def print_own_audit(report: OwnAudit, as_json: bool) -> None:
    """The audit of a composed file over the user's own collections; exit 1 when a target is missed."""
    if as_json:
        print(json.dumps(report.model_dump(mode="json")))
    else:
        table = Table("check", "found", "target", title=f"{report.dataset}: {report.questions} questions")
        table.add_row("execution errors", str(len(report.execution_errors)), "0")
        table.add_row("gold calls state the key", f"{report.answerable - len(report.disagreements)}", "all")
        table.add_row("non-vacuous rate", f"{report.non_vacuous_rate:.3f}", f">= {OWN_TARGETS['non_vacuous_rate']:g}")
        table.add_row(
            "mutation sensitivity",
            f"{report.mutation_sensitivity:.3f} ({report.killed}/{report.mutants})",
            f">= {OWN_TARGETS['mutation_sensitivity']:g}",
        )
        table.add_row("ties at a cut", str(len(report.ties)), "0")
        for name, rate in report.probes.items():
            table.add_row(f"probe {name}", f"{rate:.3f}", "1" if name.startswith("gold") else f"<= {PROBE_LIMIT:g}")
        out.print(table)
        for line in [*report.execution_errors, *report.disagreements, *report.vacuous, *report.ties][:20]:
            err.print(f"  {line}", highlight=False)
        for survivor in report.survivors[:10]:
            err.print(f"  survived: {survivor}", highlight=False)
    _exit_on(report.failed_targets)


def _exit_on(failed: list[str]) -> None:
    for target in failed:
        err.print(f"[red]target missed:[/] {target}", highlight=False)
    if failed:
        raise typer.Exit(int(ExitCode.FAILURE))
