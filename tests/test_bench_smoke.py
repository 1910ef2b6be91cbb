"""The retrieval benchmark runs end to end on a tiny input (one sample, three sessions), so it cannot rot."""

from __future__ import annotations

import json
import os
import subprocess
import sys
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


@pytest.mark.slow
def test_speed_benchmark_runs_on_a_tiny_input(tmp_path):
    # A process of its own: the benchmark builds its own databases and starts the server and
    # the worker, as `python -m bench.speed` does.
    output = tmp_path / "speed.json"
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "memoryproject.settings"}
    env.pop("Q_SYNC", None)
    completed = subprocess.run(
        [sys.executable, "-m", "bench.speed", "--smoke", "--output", str(output)],
        cwd=Path(__file__).resolve().parents[1],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    results = json.loads(output.read_text())
    (size,) = results["sizes"].values()
    for mode in ("retrieval", "full"):
        latency = size["latency"][mode]
        assert latency["n"] == 20
        assert 0 < latency["p50_ms"] <= latency["p95_ms"] <= latency["p99_ms"]
        assert latency["stages"] == {"memory+messages": 20}
        # The same number of database round-trips whatever topK is.
        assert len(set(size["round_trips"][mode].values())) == 1, size["round_trips"]
    floors = size["latency"]["query_embedding"]
    assert floors["every_core"]["threads"] >= floors["web_process"]["threads"] >= 1
    assert floors["every_core"]["p50_ms"] > 0
    assert floors["web_process"]["p50_ms"] > 0
    # The floor is the issue's: the model as sentence-transformers runs it, in PyTorch. The
    # runtime the service embeds with is measured beside it, not in its place.
    assert floors["every_core"]["runtime"] == floors["web_process"]["runtime"] == "torch"
    service = floors["service_runtime"]
    assert service["runtime"] == "onnxruntime"
    assert service["threads"] == floors["web_process"]["threads"]
    assert size["p50_over_service_embedding"] == round(size["latency"]["retrieval"]["p50_ms"] / service["p50_ms"], 2)
    # The embedding after the idle time a search leaves the model is reported beside the floor.
    idle = floors["after_idle_gap"]
    assert idle["runtime"] == "onnxruntime"
    assert idle["idle_ms"] >= 0
    assert idle["p50_ms"] > 0
    assert size["p50_over_embedding_floor"] == round(
        size["latency"]["retrieval"]["p50_ms"] / min(floors["every_core"]["p50_ms"], floors["web_process"]["p50_ms"]), 2
    )
    assert size["p50_over_idle_embedding"] == round(size["latency"]["retrieval"]["p50_ms"] / idle["p50_ms"], 2)
    # The web server runs the model in a process of its own (EMBEDDING_PROCESS): it is measured too.
    assert size["peak_rss_mb"]["web"] > 0
    assert size["peak_rss_mb"]["model_process"] > size["peak_rss_mb"]["web"]
    assert {batch: figures["messages"] for batch, figures in results["ingest"].items()} == {
        "1": 10,
        "10": 20,
        "100": 200,
    }
    worker = results["worker"]
    assert worker["messages"] == 230 + 1  # and the warm-up message
    assert worker["worker_embeddings_per_second"] > 0
    assert worker["raw_model_embeddings_per_second"] > 0
    assert "| retrieval |" in completed.stdout
