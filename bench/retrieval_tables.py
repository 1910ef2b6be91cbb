"""The tables ``bench.retrieval`` prints from its results: turn and session recall, what the default search
returns, and ours minus each baseline."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.table import Table

from bench.metrics import CATEGORY_NAMES, GROUPS, compared_metrics
from bench.report import render, table

__all__ = ["format_tables", "summary_line"]

SYSTEM_LABELS = {"ours": "ours (default search)", "bm25": "BM25 turns", "dense": "dense turns"}


def _group_label(group: str) -> str:
    if group == "1-4":
        return "1-4 all"
    return f"{group} {CATEGORY_NAMES.get(int(group), '')}".strip()


def _cells(metrics: dict[str, float], keys: Sequence[str]) -> list[str]:
    return [f"{metrics[key]:.3f}" if key in metrics else "-" for key in keys]


def _by_system(results: dict[str, Any], title: str, header: Sequence[str], keys: Sequence[str]) -> Table:
    """A row per report group and system: ``n`` and ``keys``' values."""
    rows = [
        [_group_label(group), SYSTEM_LABELS[system], metrics[group]["n"], *_cells(metrics[group], keys)]
        for group in GROUPS
        for system, metrics in results["systems"].items()
    ]
    return table(["category", "system", "n", *header], rows, title=title, left=2)


def _returned(results: dict[str, Any]) -> Table:
    top = max(results["ks"])
    keys = [f"session_hit@{top}", "evidence_shown_any", "evidence_shown_all", "answer_found"]
    rows = []
    for group in GROUPS:
        tokens = results["retrieved_tokens_median"].get(group)
        ours = results["systems"]["ours"][group]
        rows.append([_group_label(group), ours["n"], *_cells(ours, keys), None if tokens is None else f"{tokens:.0f}"])
    header = ["category", "n", f"session hit@{top}", "evidence shown (any)", "(all)", "answer found", "median tokens"]
    return table(header, rows, title="Ours, what the default search returns")


def _difference(d: dict[str, Any] | None) -> str | None:
    if not d:
        return None
    p = "p<0.001" if d["p_value"] < 0.001 else f"p={d['p_value']:.3f}"
    return f"{d['mean']:+.3f} [{d['low']:+.3f}, {d['high']:+.3f}] {p} {d['verdict']}"


def _differences(results: dict[str, Any]) -> Table:
    differences = results["differences"]
    rows = [
        [_group_label(group), metric, *(_difference(d.get(group, {}).get(metric)) for d in differences.values())]
        for group in GROUPS
        for metric in compared_metrics(results["ks"])
    ]
    title = (
        "Ours minus each baseline: mean per question [95% interval, paired bootstrap over questions], "
        "sign-flip permutation test p-value"
    )
    return table(["category", "metric", *(f"vs {SYSTEM_LABELS[b]}" for b in differences)], rows, title=title, left=2)


def format_tables(results: dict[str, Any]) -> str:
    """The turn-level and session-level tables of a ``bench.retrieval.run`` result, and the comparisons, as text."""
    ks = results["ks"]
    return render(
        _by_system(
            results,
            "Turn level: evidence recall R@k, any-evidence hit@k, MRR of the first evidence turn",
            [*(f"R@{k}" for k in ks), *(f"hit@{k}" for k in ks), f"MRR@{max(ks)}"],
            [*(f"turn_recall@{k}" for k in ks), *(f"turn_hit@{k}" for k in ks), f"mrr@{max(ks)}"],
        ),
        "",
        _by_system(
            results,
            "Session level: evidence-session recall S@k; all@k: every evidence session among the first k",
            [*(f"S@{k}" for k in ks), *(f"all@{k}" for k in ks)],
            [*(f"session_recall@{k}" for k in ks), *(f"session_all@{k}" for k in ks)],
        ),
        "",
        _returned(results),
        "",
        _differences(results),
    )


def summary_line(results: dict[str, Any]) -> str:
    """The run's data, skipped questions and evidence, and median time per question, in one line."""
    data, questions, timings = results["data"], results["questions"], results["timings"]
    skipped = results["skipped_evidence"]
    return (
        f"{len(data['samples'])} samples ({', '.join(data['samples'])}), {data['import']['sessions']} sessions, "
        f"{data['import']['messages_stored']} turns imported in {timings['import_seconds']:.0f} s; "
        f"{questions['evaluated']} of {questions['total']} questions scored "
        f"({len(questions['skipped_without_evidence'])} without usable evidence); "
        f"{skipped['count']} evidence ids skipped {skipped['by_reason']}; "
        f"evidence entries read as other ids than written: {results['repaired_evidence']['count']}; "
        f"median ms per question: {timings['median_ms_per_question']}"
    )
