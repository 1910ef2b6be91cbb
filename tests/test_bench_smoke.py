"""The retrieval benchmark runs end to end on a tiny input (one sample, three sessions), so it cannot rot."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from itertools import pairwise
from pathlib import Path

import pytest

from bench.retrieval import SMOKE, format_tables, run

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
    assert floors["every_core"]["n"] == floors["web_process"]["n"] == floors["service_runtime"]["n"] == 20
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


def test_searches_and_the_floor_alternate_in_blocks(monkeypatch):
    """The floor is measured between blocks of timed searches, not minutes after them all."""
    from bench import speed

    events = []

    class FakeServer:
        def post(self, query, variables):
            events.append(("search", variables["input"]["answer"], variables["input"]["query"]))
            return {"search": {"stages": ["memory", "messages"]}}

    class FakeEmbedder:
        def __init__(self, label):
            self.label = label

        def embed(self, texts):
            events.append(("embed", self.label, texts[0]))

    monkeypatch.setattr(
        speed, "_floor_embedders", lambda: {label: (1, "torch", FakeEmbedder(label)) for label in ("a", "b")}
    )
    questions = [(f"user-{i:04d}", f"question {i}") for i in range(50)]
    retrieval, full, floor = speed._latency_and_floor(FakeServer(), questions, progress=False)

    assert retrieval["n"] == full["n"] == floor["a"]["n"] == floor["b"]["n"] == 50
    assert retrieval["stages"] == full["stages"] == {"memory+messages": 50}
    assert len(retrieval["block_p50_ms"]) == len(floor["a"]["block_p50_ms"]) == speed.FLOOR_BLOCKS
    timed = events[2 * speed.WARM_UP_QUERIES * 2 :]  # after both models' and both modes' warm-ups
    # One block: its searches in both modes, then its embeddings by each model; five blocks.
    kinds = [kind for kind, *_ in timed]
    switches = sum(1 for before, after in pairwise(kinds) if before != after)
    assert switches == 2 * speed.FLOOR_BLOCKS - 1
    # Each block's floor embeds that block's questions, the ones just searched.
    first_block = [q for kind, _, q in timed[: 2 * 10 + 2 * 10] if kind == "embed"]
    assert first_block == [f"question {i}" for i in range(10)] * 2
