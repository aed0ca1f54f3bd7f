"""Game records (satellites_env.record): every field checked with a RecordError naming it,
true results for unfinished games, atomic saves, and a fuzz of records and their JSON."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from satellites_env import cli
from satellites_env.arena import play_game
from satellites_env.agents import make_agent
from satellites_env.core import Game
from satellites_env.record import GameRecord, RecordError

START = Game.new(seed=0).to_spn()


def real_record(seed: int = 3, max_moves: int = 60) -> GameRecord:
    return play_game(make_agent("greedy", seed=seed), make_agent("random", seed=seed), seed,
                     max_moves)


REAL = real_record()
REAL_DATA = REAL.as_dict()


def load_text(tmp_path, text: str) -> GameRecord:
    path = tmp_path / "record.json"
    path.write_text(text)
    return GameRecord.load(path)


# =============================================================================== fields


@pytest.mark.parametrize("change, message", [
    ({"moves": None}, "field 'moves' must be a list of moves .* got null"),
    ({"moves": "c10-c7"}, "field 'moves' must be a list .* got string 'c10-c7'"),
    ({"moves": {"1": "pass"}}, "field 'moves' must be a list .* got object"),
    ({"moves": [5]}, "field 'moves': move 1 must be a string .* got int 5"),
    ({"moves": ["pass", None]}, "field 'moves': move 2 must be a string .* got null"),
    ({"moves": [True]}, "move 1 must be a string .* got boolean true"),
    ({"moves": ["c10-c7", "hello"]}, "field 'moves': move 2: bad move 'hello'"),
    ({"start_spn": None}, "field 'start_spn' must be a string .* got null"),
    ({"start_spn": 12}, "field 'start_spn' must be a string .* got int 12"),
    ({"start_spn": "x"}, "field 'start_spn' is not a valid SPN position: SPN needs 5"),
    ({"max_moves": "400"}, "field 'max_moves' must be an integer from 1 to .* got string '400'"),
    ({"max_moves": 0}, "field 'max_moves' must be an integer from 1 .* got int 0"),
    ({"max_moves": 1.5}, "field 'max_moves' .* got float 1.5"),
    ({"max_moves": True}, "field 'max_moves' .* got boolean true"),
    ({"max_moves": 2**40}, "field 'max_moves' must be an integer from 1 to 2147483647"),
    ({"players": []}, "field 'players' must be an object .* got list"),
    ({"players": {"green": "random"}}, "field 'players' has the key 'green'"),
    ({"players": {"red": 3}}, "field 'players': 'red' must be a string .* got int 3"),
    ({"result": "red"}, "field 'result' must be an object .* got string 'red'"),
    ({"result": {"winner": "green"}}, "field 'result.winner' must be 'red', 'blue' or null"),
    ({"result": {"winner": 0}}, "field 'result.winner' .* got int 0"),
    ({"result": {"end": "over"}}, "field 'result.end' must be one of terminated, truncated"),
    ({"result": {"reason": 3}}, "field 'result.reason' must be a string or null"),
    ({"result": {"score": 3}}, "field 'result' has unknown keys \\['score'\\]"),
    ({"color": "red"}, "has unknown keys \\['color'\\]"),
])
def test_bad_fields_are_named(tmp_path, change, message):
    data = {**copy.deepcopy(REAL_DATA), **change}
    with pytest.raises(RecordError, match=message):
        load_text(tmp_path, json.dumps(data))
    with pytest.raises(RecordError, match=message):
        GameRecord.from_dict(data)


@pytest.mark.parametrize("text, message", [
    ("[]", "must be a JSON object .* got list"),
    ("null", "must be a JSON object .* got null"),
    ('"a record"', "must be a JSON object .* got string"),
    ("{}", "needs the keys 'start_spn' and 'moves'; missing \\['start_spn', 'moves'\\]"),
    ('{"start_spn": "x"}', "missing \\['moves'\\]"),
    ("{not json", "is not valid JSON"),
    ('{"start_spn": NaN, "moves": []}', "is not valid JSON: NaN is not a JSON number"),
    ("[" * 100_000 + "]" * 100_000, "is not valid JSON"),
])
def test_bad_documents(tmp_path, text, message):
    with pytest.raises(RecordError, match=message):
        load_text(tmp_path, text)


def test_not_utf8_and_directory(tmp_path):
    path = tmp_path / "latin1.json"
    path.write_bytes(b'{"start_spn": "\xe9"}')
    with pytest.raises(RecordError, match="is not UTF-8 text"):
        GameRecord.load(path)
    with pytest.raises(RecordError, match="is a directory, not a record file"):
        GameRecord.load(tmp_path)
    with pytest.raises(RecordError, match="does not exist"):
        GameRecord.load(tmp_path / "missing.json")


def test_replay_checks_the_result_against_the_moves():
    record = GameRecord.from_dict(copy.deepcopy(REAL_DATA))
    assert len(record.replay()) == len(record.moves) + 1
    wrong = copy.deepcopy(REAL_DATA)
    wrong["result"]["final_spn"] = START
    with pytest.raises(RecordError, match="'result.final_spn' .* is not the position after"):
        GameRecord.from_dict(wrong).replay()
    assert REAL.result["end"] in ("terminated", "truncated")
    wrong = copy.deepcopy(REAL_DATA)
    wrong["result"]["winner"] = "blue" if REAL.result["winner"] != "blue" else "red"
    with pytest.raises(RecordError, match="'result.winner' is .* but the moves end with"):
        GameRecord.from_dict(wrong).replay()
    too_many = copy.deepcopy(REAL_DATA)
    too_many["moves"].append("pass")
    too_many["result"] = {}
    with pytest.raises(RecordError, match=f"move {len(REAL.moves) + 1} 'pass' does not apply"):
        GameRecord.from_dict(too_many).replay()


def test_a_record_built_in_code_is_checked_on_replay():
    with pytest.raises(RecordError, match="field 'moves': move 1 must be a string"):
        GameRecord(START, [3]).replay()
    with pytest.raises(RecordError, match="field 'moves' must be a list"):
        GameRecord(START, None).replay()


# =============================================================================== results


def test_winner_vocabulary_and_unfinished_games():
    """"red", "blue" or null; a stopped game has no winner, a resignation has one."""
    assert REAL.result["winner"] in ("red", "blue", None)
    game = Game.new(seed=0)
    game.play_move(game.legal_moves()[0])
    stopped = GameRecord.of(START, game, {"red": "human", "blue": "random"})
    assert stopped.result["winner"] is None and stopped.result["end"] == "ongoing"
    resigned = GameRecord.of(START, game, resigned="red")
    assert resigned.result == {"winner": "blue", "reason": "red resigned", "end": "resigned",
                               "final_spn": game.to_spn()}
    for record in (stopped, resigned):
        assert len(GameRecord.from_dict(record.as_dict()).replay()) == 2


def test_old_draw_winner_reads_as_null():
    data = copy.deepcopy(REAL_DATA)
    data["result"] = {"winner": "draw"}
    assert GameRecord.from_dict(data).result["winner"] is None


def test_save_is_atomic(tmp_path, monkeypatch):
    path = tmp_path / "game.json"
    REAL.save(path)
    before = path.read_text()

    def broken(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("satellites_env.record.os.replace", broken)
    with pytest.raises(OSError):
        GameRecord(START, []).save(path)
    assert path.read_text() == before and [p.name for p in tmp_path.iterdir()] == ["game.json"]


# =============================================================================== huge fields

HUGE = "c" * 10**6


@pytest.mark.parametrize("change", [
    {"start_spn": HUGE}, {"start_spn": "9" * 10**5}, {"moves": [HUGE]},
    {"moves": ["pass"] * 3 + [HUGE]}, {"max_moves": HUGE}, {"max_moves": 10**5000},
    {"max_moves": -(10**400)}, {"players": {HUGE: "random"}}, {"players": {"red": 10**5000}},
    {"result": {HUGE: 1}}, {"result": {"winner": HUGE}}, {"result": {"end": HUGE}},
    {"result": {"reason": 10**5000}}, {"result": {"final_spn": HUGE}}, {HUGE: 1},
    {"moves": [10**5000]},
])
def test_errors_quote_a_bounded_prefix_of_huge_fields(tmp_path, change):
    """A 1 MB field (or a 5000-digit number) is quoted by a prefix, in one line."""
    data = {**copy.deepcopy(REAL_DATA), **change}
    with pytest.raises(RecordError) as error:
        GameRecord.from_dict(data).replay()
    message = str(error.value)
    assert len(message) < 400 and "\n" not in message, message[:400]
    try:
        text = json.dumps(data)
    except ValueError:  # Python writes no integer of over 4300 digits
        return
    with pytest.raises(RecordError) as error:  # the same through a file
        load_text(tmp_path, text).replay()
    assert len(str(error.value)) < 400 + len(str(tmp_path)), str(error.value)[:400]


# =============================================================================== fuzz

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
    | st.text(max_size=12),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12)
FIELD_VALUES = st.one_of(JSON, st.sampled_from([START, "pass", "c10-c7", "red", "draw", 400]),
                         st.lists(st.sampled_from(REAL.moves + ["pass", "a1-a2", 7]),
                                  max_size=8))
FUZZ = settings(max_examples=300, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow])


def only_record_errors(data) -> None:
    try:
        GameRecord.from_dict(data).replay()
    except RecordError:
        pass


@FUZZ
@given(JSON)
def test_fuzz_random_json(data):
    only_record_errors(data)


@FUZZ
@given(st.dictionaries(st.sampled_from(["start_spn", "moves", "max_moves", "players",
                                        "result", "extra"]), FIELD_VALUES, max_size=5))
def test_fuzz_records_with_random_fields(data):
    only_record_errors(data)


@st.composite
def mutated_record(draw):
    """The real record with one to three fields, moves or result entries replaced."""
    data = copy.deepcopy(REAL_DATA)
    for _ in range(draw(st.integers(1, 3))):
        target = draw(st.sampled_from(["field", "move", "result", "delete", "truncate"]))
        if target == "field":
            data[draw(st.sampled_from(sorted(data)))] = draw(FIELD_VALUES)
        elif target == "move" and isinstance(data.get("moves"), list) and data["moves"]:
            at = draw(st.integers(0, len(data["moves"]) - 1))
            data["moves"][at] = draw(st.one_of(JSON, st.sampled_from(REAL.moves)))
        elif target == "result" and isinstance(data.get("result"), dict):
            data["result"][draw(st.sampled_from(["winner", "reason", "end", "final_spn",
                                                 "other"]))] = draw(FIELD_VALUES)
        elif target == "delete" and data:
            del data[draw(st.sampled_from(sorted(data)))]
        elif target == "truncate" and isinstance(data.get("moves"), list):
            data["moves"] = data["moves"][:draw(st.integers(0, len(data["moves"])))]
    return data


@FUZZ
@given(mutated_record())
def test_fuzz_mutated_real_record(data):
    only_record_errors(data)


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(content=st.one_of(st.binary(max_size=60), st.text(max_size=60).map(str.encode),
                        mutated_record().map(lambda data: json.dumps(data).encode())))
def test_fuzz_record_files_through_the_cli(tmp_path, capsys, content):
    """`satellites replay FILE`: a bad file is one error line and status 2."""
    path = tmp_path / "fuzz.json"
    path.write_bytes(content)
    status = cli.main(["replay", str(path)])
    captured = capsys.readouterr()
    assert status in (0, 2), captured.err
    if status == 2:
        assert captured.err.startswith("error: ") and "Traceback" not in captured.err
