"""The retrieval benchmark's reading of LoCoMo evidence: entries as the released files write them."""

from __future__ import annotations

from bench.metrics import RepairedEvidence, SkippedEvidence, clean_evidence, read_evidence

CONVERSATION = {"D1:3", "D8:6", "D9:17", "D11:26", "D30:5", "D2:1"}


def _clean(evidence, imported=CONVERSATION):  # noqa: ANN001, ANN202
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
