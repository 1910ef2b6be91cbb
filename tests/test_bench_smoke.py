"""The retrieval benchmark runs end to end on a tiny input (one sample, three sessions), so it cannot rot."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.retrieval import SMOKE, run

LOCOMO = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo_dev.json"


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_retrieval_benchmark_runs_on_a_tiny_input():
    if not LOCOMO.exists():
        pytest.fail(f"{LOCOMO} is missing: the shared data folder must sit beside the repository.")
    results = run(LOCOMO, **SMOKE, ks=(1, 5, 10), use_current_database=True, progress=False)

    assert results["data"]["import"]["messages_stored"] > 0
    assert results["questions"]["evaluated"] >= 20
    for system in ("ours", "bm25", "dense"):
        overall = results["systems"][system]["1-4"]
        assert overall["n"] == sum(results["systems"][system][c]["n"] for c in "1234")
        assert 0 <= overall["turn_recall@1"] <= overall["turn_recall@5"] <= overall["turn_recall@10"] <= 1
        assert overall["turn_recall@10"] <= overall["turn_hit@10"]
    # Measured 0.70 on this input; the pipeline must stay well above chance.
    assert results["systems"]["ours"]["1-4"]["turn_hit@10"] >= 0.5
