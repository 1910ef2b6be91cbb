"""What every benchmark reports: latency figures, the run's machine and code, tables, the results file.

Percentiles are ``statistics.quantiles`` with the ``"inclusive"`` method (linear interpolation
between the closest ranks, numpy's default): p50 is the median. Tables are ``rich`` tables,
rendered to text that is never wrapped (``render``); ``markdown=True`` draws them as Markdown,
for the figures docs/benchmarks.md quotes.
"""

from __future__ import annotations

import io
import json
import os
import platform
import statistics
import subprocess
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console, RenderableType
from rich.table import Table

__all__ = [
    "REPO_ROOT",
    "RESULTS_DIR",
    "code_version",
    "finish",
    "latency_figures",
    "machine",
    "percentile",
    "render",
    "run_record",
    "save_results",
    "table",
]

REPO_ROOT = Path(__file__).resolve().parent.parent
RESULTS_DIR = Path(__file__).resolve().parent / "results"
# Wide enough that no table is wrapped: a wrapped row is no longer a row one can paste.
_WIDTH = 1000


def percentile(values: Sequence[float], q: int) -> float:
    """The ``q``-th percentile (1 <= q <= 99) of ``values`` (see the module docstring); a lone value is its own.

    Raises:
        statistics.StatisticsError: no values.
    """
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def latency_figures(seconds: Sequence[float]) -> dict[str, float]:
    """``n``, p50 / p95 / p99 and the mean of ``seconds``, in milliseconds (2 decimals)."""
    ms = [s * 1000 for s in seconds]
    return {
        "n": len(ms),
        "p50_ms": round(statistics.median(ms), 2),
        "p95_ms": round(percentile(ms, 95), 2),
        "p99_ms": round(percentile(ms, 99), 2),
        "mean_ms": round(statistics.fmean(ms), 2),
    }


def machine() -> dict[str, Any]:
    """The platform, processor, CPU count and Python version the benchmark ran on."""
    return {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "processor": platform.processor(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
    }


def code_version() -> dict[str, Any]:
    """The git commit the benchmark ran on, and whether the working tree had changes (``None``s without git)."""

    def git(*args: str) -> str | None:
        try:
            result = subprocess.run(["git", *args], cwd=REPO_ROOT, capture_output=True, text=True, check=True)
        except (OSError, subprocess.CalledProcessError):
            return None
        return result.stdout.strip()

    status = git("status", "--porcelain")
    return {"commit": git("rev-parse", "HEAD"), "dirty": bool(status) if status is not None else None}


def run_record(benchmark: str, *, at: str = "started_at") -> dict[str, Any]:
    """What a results file opens with: ``{"benchmark", <at>: the UTC time, "machine", "code"}``."""
    now = datetime.now(UTC).isoformat(timespec="seconds")
    return {"benchmark": benchmark, at: now, "machine": machine(), "code": code_version()}


def table(
    header: Sequence[str],
    rows: Iterable[Sequence[Any]],
    *,
    title: str | None = None,
    caption: str | None = None,
    markdown: bool = False,
    left: int = 1,
) -> Table:
    """A ``rich`` table of ``rows`` (cells shown with ``str``); the first ``left`` columns left-aligned, the rest right.

    ``markdown``: drawn as a Markdown table (``| a | b |``), else with a line under the header only.
    """
    drawn = Table(
        title=title,
        caption=caption,
        box=box.MARKDOWN if markdown else box.SIMPLE_HEAD,
        show_edge=markdown,
        pad_edge=markdown,
        title_justify="left",
        caption_justify="left",
    )
    for i, name in enumerate(header):
        drawn.add_column(name, justify="left" if i < left else "right", no_wrap=True)
    for row in rows:
        drawn.add_row(*("-" if cell is None else str(cell) for cell in row))
    return drawn


def render(*parts: RenderableType) -> str:
    """``parts`` (tables, text) as plain text, one after the other, without colours and never wrapped."""
    out = io.StringIO()
    console = Console(file=out, width=_WIDTH, color_system=None, highlight=False, emoji=False, markup=False)
    for part in parts:
        console.print(part, soft_wrap=isinstance(part, str))
    return "\n".join(line.rstrip() for line in out.getvalue().splitlines()).strip("\n")


def save_results(results: dict[str, Any], name: str, output: Path | None = None) -> Path:
    """Write ``results`` as JSON to ``output`` (default ``bench/results/<name>-<UTC time>.json``); returns the path."""
    path = output or RESULTS_DIR / f"{name}-{datetime.now(UTC):%Y%m%dT%H%M%SZ}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n")
    return path


def finish(results: dict[str, Any], name: str, output: Path | None, *text: str) -> int:
    """Save ``results`` (``save_results``), print ``text`` and the results file; returns 0, the exit status."""
    path = save_results(results, name, output)
    print(*text, f"results: {path}", sep="\n")
    return 0
