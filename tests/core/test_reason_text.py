"""The result's reason reads as English (`1 colony`, `2 colonies`), and a record written
before it did (`red controls 1 colonies`) still loads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from satellites_env.record import GameRecord, RecordError

# written by an engine that said `1 colonies`; its game 5 ends with red controlling one
OLD = Path(__file__).resolve().parents[1] / "agents" / "data" / "tournament_az_seed11.json"


def test_one_colony_is_singular_and_an_old_record_still_loads():
    data = json.loads(OLD.read_text())[5]
    assert data["result"]["reason"] == "red controls 1 colonies, blue 3 (R22)"
    record = GameRecord.from_dict(data)
    final = record.replay()[-1]
    assert final.score().reason == "red controls 1 colony, blue 3 (R22)"
    now = {**data, "result": {**data["result"], "reason": final.score().reason}}
    assert GameRecord.from_dict(now).replay()[-1].score().reason == final.score().reason
    wrong = {
        **data,
        "result": {**data["result"], "reason": "red controls 1 colonies, blue 2 (R22)"},
    }
    with pytest.raises(RecordError, match=r"result.reason"):
        GameRecord.from_dict(wrong).replay()


def test_other_counts_are_plural():
    data = json.loads(OLD.read_text())[3]
    final = GameRecord.from_dict(data).replay()[-1]
    assert (
        final.score().reason == data["result"]["reason"] == "red controls 0 colonies, blue 3 (R22)"
    )
