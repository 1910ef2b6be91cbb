"""The retrieval benchmark runs end to end on a tiny input (one sample, three sessions), so it cannot rot."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bench.retrieval import SMOKE, run
from bench.retrieval_tables import format_tables

LOCOMO = Path(__file__).resolve().parents[3] / "shared" / "data" / "locomo" / "locomo_dev.json"


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
    # The default search finds an evidence turn for most questions: well above chance.
    assert results["systems"]["ours"]["1-4"]["turn_hit@10"] >= 0.5
    # Ours against each baseline on the targets' metrics, with the interval of the difference.
    for baseline in ("bm25", "dense"):
        for metric in ("turn_recall@10", "session_recall@5"):
            difference = results["differences"][baseline]["1-4"][metric]
            assert difference["n"] == results["systems"]["ours"]["1-4"]["n"]
            assert difference["mean"] == pytest.approx(
                results["systems"]["ours"]["1-4"][metric] - results["systems"][baseline]["1-4"][metric]
            )
            assert difference["low"] <= difference["mean"] <= difference["high"]
            assert 0 < difference["p_value"] <= 1
    # The printed comparison has a row per report group and compared metric.
    table = format_tables(results).split("Ours minus each baseline")[1]
    assert sum(line.startswith("1-4 all") for line in table.splitlines()) == 2


@pytest.mark.slow
def test_speed_benchmark_runs_on_a_tiny_input(tmp_path):
    # A process of its own: the benchmark builds its own databases and starts the server and
    # the worker, as `python -m bench.speed` does.
    from bench.speed import CPU_FACTOR, FLOOR_BLOCKS, MODES, P50_FACTOR, P95_FACTOR

    output = tmp_path / "speed.json"
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "memoryproject.settings"}
    env.pop("Q_SYNC", None)
    completed = subprocess.run(
        [sys.executable, "-m", "bench.speed", "--smoke", "--output", str(output)],
        cwd=Path(__file__).resolve().parents[2],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    results = json.loads(output.read_text())
    (size,) = results["sizes"].values()
    assert set(MODES) == {"search", "retrieval", "context"}
    for mode in MODES:
        latency = size["latency"][mode]
        assert latency["n"] == 20
        assert 0 < latency["p50_ms"] <= latency["p95_ms"] <= latency["p99_ms"]
        # Requests and floor alternate in blocks: a median per block.
        assert len(latency["block_p50_ms"]) == FLOOR_BLOCKS
    # The default search answers (offline: the turns quoted, or "not found in memory").
    assert sum(size["latency"]["search"]["answer_modes"].values()) == 20
    assert "none" not in size["latency"]["search"]["answer_modes"]
    # The same number of database round-trips whatever topK is; a context costs a few too.
    assert len(set(size["round_trips"]["search"].values())) == 1, size["round_trips"]
    assert size["round_trips"]["context"] > 0
    floors = size["latency"]["query_embedding"]
    assert floors["service_runtime"]["n"] == floors["pytorch_reference"]["n"] == 20
    # The floor is the query embedding as the service runs it (ONNX Runtime); PyTorch is only a reference.
    assert (floors["service_runtime"]["runtime"], floors["pytorch_reference"]["runtime"]) == ("onnxruntime", "torch")
    floor = floors["service_runtime"]
    assert size["floor_ms"] == floor["p50_ms"] > 0
    assert floor["cpu_ms"] > 0
    for mode in ("search", "context"):
        target, latency = size["targets"][mode], size["latency"][mode]
        assert latency["cpu_ms"] > 0  # the server's CPU per request
        assert target["p50_over_floor"] == round(latency["p50_ms"] / floor["p50_ms"], 2)
        assert target["p50_ok"] == (target["p50_over_floor"] <= P50_FACTOR)
        assert target["p95_ok"] == (round(latency["p95_ms"] / floor["p50_ms"], 2) <= P95_FACTOR)
        assert target["cpu_ok"] == (round(latency["cpu_ms"] / floor["cpu_ms"], 2) <= CPU_FACTOR)
    assert size["peak_rss_mb"]["web"] > 0
    assert {batch: figures["messages"] for batch, figures in results["ingest"].items()} == {
        "1": 10,
        "10": 20,
        "100": 200,
    }
    worker = results["worker"]
    assert worker["messages"] == 230 + 1  # and the warm-up message
    assert worker["worker_messages_per_second"] > 0
    assert worker["raw_model_messages_per_second"] > 0
    # The Markdown table docs/benchmarks.md quotes: a row per size and request.
    assert re.search(r"^\| 2k +\| search +\|", completed.stdout, re.MULTILINE), completed.stdout
    assert re.search(r"^\| 2k +\| context +\|", completed.stdout, re.MULTILINE), completed.stdout


@pytest.mark.slow
def test_truth_benchmark_runs_on_a_tiny_input(tmp_path):
    # A process of its own, as `python -m bench.truth` runs: it replays users into a throwaway database.
    output = tmp_path / "truth.json"
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "memoryproject.settings"}
    completed = subprocess.run(
        [sys.executable, "-m", "bench.truth", "--smoke", "--output", str(output)],
        cwd=Path(__file__).resolve().parents[2],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    results = json.loads(output.read_text())
    figures = results["figures"]["default"]
    assert results["users"] == 2
    assert sum(figures["probes"].values()) == len(results["probes"]) > 0
    for score in ("current_in_context", "current_in_answer", "echo_share", "gate"):
        assert 0 <= figures[score] <= 1
    assert "current fact in the context" in completed.stdout
