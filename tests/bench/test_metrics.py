"""The retrieval benchmark's reading of LoCoMo evidence, and how it compares two systems."""

from __future__ import annotations

import pytest

from bench.metrics import RepairedEvidence, SkippedEvidence, clean_evidence, paired_difference, read_evidence

CONVERSATION = {"D1:3", "D8:6", "D9:17", "D11:26", "D30:5", "D2:1"}


def _clean(evidence, imported=CONVERSATION):
    return clean_evidence(
        sample_id="conv-x", question_index=7, evidence=evidence, in_file=CONVERSATION, imported=set(imported)
    )


def test_read_evidence_finds_every_id_in_a_loosely_written_entry():
    assert read_evidence("D1:3") == ["D1:3"]
    assert read_evidence("D8:6; D9:17") == ["D8:6", "D9:17"]
    assert read_evidence("D8:6 D9:17") == ["D8:6", "D9:17"]
    assert read_evidence("D:11:26") == ["D11:26"]
    assert read_evidence("D30:05") == ["D30:5"]
    assert read_evidence("['D1:3', 'D2:1']") == ["D1:3", "D2:1"]
    assert read_evidence("D10:") == []
    assert read_evidence("Round 3:4") == []
    assert read_evidence("Dad 2:1") == []
    assert read_evidence("") == []


def test_clean_ids_are_used_as_written_and_not_reported():
    valid, skipped, repaired = _clean(["D1:3", "D2:1"])
    assert valid == {"D1:3", "D2:1"}
    assert skipped == []
    assert repaired == []


def test_an_entry_holding_two_ids_scores_both_and_is_reported():
    valid, skipped, repaired = _clean(["D8:6; D9:17", "D30:05"])
    assert valid == {"D8:6", "D9:17", "D30:5"}
    assert skipped == []
    assert repaired == [
        RepairedEvidence("conv-x", 7, "D8:6; D9:17", ("D8:6", "D9:17")),
        RepairedEvidence("conv-x", 7, "D30:05", ("D30:5",)),
    ]


def test_the_whole_list_as_text_is_read():
    valid, _, repaired = _clean("['D1:3', 'D2:1']")
    assert valid == {"D1:3", "D2:1"}
    assert len(repaired) == 1


def test_ids_that_cannot_be_scored_are_skipped_with_their_reason():
    valid, skipped, _ = _clean(["D10:", "D4:4", "D8:6; D2:1", "D1:3"], imported={"D1:3", "D8:6"})
    assert valid == {"D1:3", "D8:6"}
    assert skipped == [
        SkippedEvidence("conv-x", 7, "D10:", "malformed"),
        SkippedEvidence("conv-x", 7, "D4:4", "not in conversation"),
        SkippedEvidence("conv-x", 7, "D2:1", "not imported"),
    ]


# --- Comparing two systems question by question ------------------------------------------

# One metric per question for a baseline: questions of every difficulty, 0 to 1.
BASELINE = [i / 39 for i in range(40)]


def test_a_small_lead_on_every_question_is_ahead_because_the_questions_are_paired():
    ours = [min(1.0, b + 0.05) for b in BASELINE]
    difference = paired_difference(ours, BASELINE)
    assert difference.mean == pytest.approx(sum(o - b for o, b in zip(ours, BASELINE, strict=True)) / 40)
    assert 0 < difference.low <= difference.mean <= difference.high
    # Each system's own scores spread over 0..1, twenty times the lead: compared as two
    # independent means, the lead would be within noise; paired, it is on every question.
    assert difference.verdict == "ahead"


def test_systems_that_trade_wins_are_within_noise_and_a_clear_loss_is_behind():
    ours = [b + (0.2 if i % 2 else -0.2) for i, b in enumerate(BASELINE)]
    even = paired_difference(ours, BASELINE)
    assert even.low < 0 < even.high
    assert even.verdict == "within noise"
    worse = paired_difference([b - (0.2 if i % 2 else 0.4) for i, b in enumerate(BASELINE)], BASELINE)
    assert worse.low < worse.mean < worse.high < 0
    assert worse.verdict == "behind"


def test_a_few_wins_are_not_enough_to_be_ahead():
    # Five wins out of five: the sign-flip test's exact p-value is 2 / 2**5 = 0.0625, whatever
    # the bootstrap interval says; eight out of eight give 2 / 2**8.
    five = paired_difference([1.0, 0.8, 1.0, 0.6, 1.0], [0.0, 0.2, 0.5, 0.0, 0.0])
    assert five.low > 0
    assert five.p_value == pytest.approx(0.0625)
    assert five.verdict == "within noise"
    eight = paired_difference([1.0, 0.8, 1.0, 0.6, 1.0, 1.0, 0.5, 1.0], [0.0, 0.2, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0])
    assert eight.p_value == pytest.approx(2 / 2**8)
    assert eight.verdict == "ahead"


def test_the_interval_is_reproducible_and_a_constant_difference_is_its_own_interval():
    ours = [b + (0.3 if i % 3 == 0 else 0.0) for i, b in enumerate(BASELINE)]
    assert paired_difference(ours, BASELINE) == paired_difference(ours, BASELINE)
    tied = paired_difference(BASELINE, BASELINE)
    assert (tied.mean, tied.low, tied.high, tied.p_value, tied.verdict) == (0.0, 0.0, 0.0, 1.0, "within noise")


def test_unpaired_or_empty_samples_are_refused():
    with pytest.raises(ValueError, match="differ in length"):
        paired_difference([1.0, 0.0], [1.0])
    with pytest.raises(ValueError, match="No questions"):
        paired_difference([], [])
    with pytest.raises(ValueError, match="not a finite number"):
        paired_difference([1.0, float("nan")], [0.0, 0.0])
