"""Game records (satellites_env.record): every field checked with a RecordError naming it,
true results for unfinished games, atomic saves, and a fuzz of records and their JSON."""

from __future__ import annotations

import copy
import functools
import json

import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

from satellites_env import cli
from satellites_env.agents import make_agent
from satellites_env.arena import play_game
from satellites_env.core import Game
from satellites_env.record import GameRecord, RecordError

START = Game.new(seed=0).to_spn()


def real_record(seed: int = 3, max_moves: int = 60) -> GameRecord:
    return play_game(
        make_agent("greedy", seed=seed), make_agent("random", seed=seed), seed, max_moves
    )


REAL = real_record()
REAL_DATA = REAL.as_dict()


def load_text(tmp_path, text: str) -> GameRecord:
    path = tmp_path / "record.json"
    path.write_text(text)
    return GameRecord.load(path)


# =============================================================================== fields


@pytest.mark.parametrize(
    "change, message",
    [
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
        (
            {"max_moves": "400"},
            "field 'max_moves' must be an integer from 1 to .* got string '400'",
        ),
        ({"max_moves": 0}, "field 'max_moves' must be an integer from 1 .* got int 0"),
        ({"max_moves": 1.5}, "field 'max_moves' .* got float 1.5"),
        ({"max_moves": True}, "field 'max_moves' .* got boolean true"),
        ({"max_moves": 2**40}, "field 'max_moves' must be an integer from 1 to 1000000,"),
        ({"max_moves": 1_000_001}, "field 'max_moves' must be an integer from 1 to 1000000,"),
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
    ],
)
def test_bad_fields_are_named(tmp_path, change, message):
    data = {**copy.deepcopy(REAL_DATA), **change}
    with pytest.raises(RecordError, match=message):
        load_text(tmp_path, json.dumps(data))
    with pytest.raises(RecordError, match=message):
        GameRecord.from_dict(data)


@pytest.mark.parametrize(
    "text, message",
    [
        ("[]", "must be a JSON object .* got list"),
        ("null", "must be a JSON object .* got null"),
        ('"a record"', "must be a JSON object .* got string"),
        ("{}", "needs the keys 'start_spn' and 'moves'; missing \\['start_spn', 'moves'\\]"),
        ('{"start_spn": "x"}', "missing \\['moves'\\]"),
        ("{not json", "is not valid JSON"),
        ('{"start_spn": NaN, "moves": []}', "is not valid JSON: NaN is not a JSON number"),
        ("[" * 100_000 + "]" * 100_000, "is not valid JSON"),
    ],
)
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
    with pytest.raises(RecordError, match=r"'result.final_spn' .* is not the position after"):
        GameRecord.from_dict(wrong).replay()
    assert REAL.result["end"] in ("terminated", "truncated")
    wrong = copy.deepcopy(REAL_DATA)
    wrong["result"]["winner"] = "blue" if REAL.result["winner"] != "blue" else "red"
    with pytest.raises(RecordError, match=r"'result.winner' is .* but the moves end the game"):
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
    """ "red", "blue" or null; a stopped game has no winner, a resignation has one."""
    assert REAL.result["winner"] in ("red", "blue", None)
    game = Game.new(seed=0)
    game.play_move(game.legal_moves()[0])
    stopped = GameRecord.of(START, game, {"red": "human", "blue": "random"})
    assert stopped.result["winner"] is None and stopped.result["end"] == "ongoing"
    resigned = GameRecord.of(START, game, resigned="red")
    assert resigned.result == {
        "winner": "blue",
        "reason": "red resigned",
        "end": "resigned",
        "final_spn": game.to_spn(),
    }
    for record in (stopped, resigned):
        assert len(GameRecord.from_dict(record.as_dict()).replay()) == 2


TRUNCATED = play_game(make_agent("random", seed=1), make_agent("random", seed=2), 1, 12)


def unfinished_game(moves: int = 5) -> Game:
    game = Game.new(seed=0)
    for _ in range(moves):
        game.play_move(game.legal_moves()[0])
    return game


ONGOING = GameRecord.of(START, unfinished_game())
RESIGNED = GameRecord.of(START, unfinished_game(), resigned="red")


@pytest.mark.parametrize(
    "record, change, field",
    [
        (REAL, {"winner": "blue"}, "winner"),
        (REAL, {"winner": None}, "winner"),
        (REAL, {"end": "truncated"}, "end"),
        (REAL, {"end": "ongoing", "winner": None}, "end"),
        (REAL, {"end": "resigned", "winner": "red", "reason": "blue resigned"}, "end"),
        (REAL, {"reason": "blue resigned"}, "reason"),
        (REAL, {"reason": "red controls 9 colonies, blue 0 (R22)"}, "reason"),
        (TRUNCATED, {"end": "terminated"}, "end"),
        (TRUNCATED, {"winner": "red"}, "winner"),
        (ONGOING, {"end": "terminated"}, "end"),
        (ONGOING, {"end": "truncated"}, "end"),
        (ONGOING, {"winner": "red"}, "winner"),
        (ONGOING, {"reason": "red controls 3 colonies, blue 1 (R22)"}, "reason"),
        (RESIGNED, {"winner": None}, "winner"),
        (RESIGNED, {"reason": "blue resigned"}, "reason"),
        (RESIGNED, {"end": "terminated"}, "end"),
        (RESIGNED, {"end": None}, "end"),  # null is no end: refused when the fields are checked
    ],
)
def test_a_stated_result_that_lies_is_refused_naming_the_field(record, change, field):
    """The winner, the end, the reason: each is checked against the engine on replay."""
    assert TRUNCATED.result["end"] == "truncated" and REAL.result["end"] == "terminated"
    assert len(GameRecord.from_dict(record.as_dict()).replay()) == len(record.moves) + 1
    data = record.as_dict()
    data["result"] = {**data["result"], **change}
    with pytest.raises(RecordError, match=f"field 'result.{field}'"):
        GameRecord.from_dict(data).replay()


def test_an_unstated_result_is_not_checked_but_an_unfinished_one_has_no_winner():
    for record in (REAL, TRUNCATED, ONGOING, RESIGNED):
        data = record.as_dict()
        data["result"] = {}
        GameRecord.from_dict(data).replay()  # nothing stated, nothing to contradict
    data = RESIGNED.as_dict()
    del data["result"]["end"]  # without its end, a resignation reads as a game stopped
    with pytest.raises(
        RecordError,
        match=r"field 'result.winner' is string 'blue' but the game "
        "is not over",
    ):
        GameRecord.from_dict(data).replay()


def test_lying_records_are_refused_by_the_cli_and_the_page(tmp_path, capsys):
    data = REAL.as_dict()
    data["result"]["winner"] = "blue"
    path = tmp_path / "lying.json"
    path.write_text(json.dumps(data))
    page = tmp_path / "game.html"
    assert cli.main(["replay", str(path), "--html", str(page)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "'result.winner'" in err
    assert not page.exists()
    from satellites_env.web import replay_html

    with pytest.raises(RecordError, match=r"'result.winner'"):
        replay_html(GameRecord.from_dict(data))


@pytest.mark.parametrize(
    "text, key",
    [
        ('{"start_spn": "x", "moves": [], "moves": ["pass"]}', "moves"),
        (
            f'{{"start_spn": "{START}", "moves": [], "result": {{"winner": "red", "winner": null}}}}',  # noqa: E501
            "winner",
        ),
        (
            f'{{"start_spn": "{START}", "moves": [], "players": {{"red": "a", "blue": "b", "red": "c"}}}}',  # noqa: E501
            "red",
        ),
    ],
)
def test_a_key_given_twice_is_refused(tmp_path, text, key):
    with pytest.raises(RecordError, match=f"the key '{key}' is given twice in one JSON object"):
        load_text(tmp_path, text)


def test_of_checks_its_players_and_resigned():
    game = unfinished_game()
    for bad in ([("red", "x")], {"green": "x"}, {"red": 3}, "red", 10**5000):
        with pytest.raises(ValueError, match=r"^players must be a dict") as error:
            GameRecord.of(START, game, bad)
        assert len(str(error.value)) < 200
    with pytest.raises(ValueError, match=r"^resigned must be 'red' or 'blue', got 'zzz"):
        GameRecord.of(START, game, resigned="z" * 10**6)


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

    monkeypatch.setattr("satellites_env.files.os.replace", broken)
    with pytest.raises(OSError):
        GameRecord(START, []).save(path)
    assert path.read_text() == before and [p.name for p in tmp_path.iterdir()] == ["game.json"]


# =============================================================================== huge fields

HUGE = "c" * 10**6


@pytest.mark.parametrize(
    "change",
    [
        {"start_spn": HUGE},
        {"start_spn": "9" * 10**5},
        {"moves": [HUGE]},
        {"moves": ["pass"] * 3 + [HUGE]},
        {"max_moves": HUGE},
        {"max_moves": 10**5000},
        {"max_moves": -(10**400)},
        {"players": {HUGE: "random"}},
        {"players": {"red": 10**5000}},
        {"result": {HUGE: 1}},
        {"result": {"winner": HUGE}},
        {"result": {"end": HUGE}},
        {"result": {"reason": 10**5000}},
        {"result": {"final_spn": HUGE}},
        {HUGE: 1},
        {"moves": [10**5000]},
    ],
)
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
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
# numbers near and beyond the move cap, and fields too long to echo
HUGE_VALUES = st.sampled_from(
    [
        1_000_000,
        1_000_001,
        2**31,
        2**63,
        10**300,
        "x" * 10**5,
        "9" * 10**5,
        ["c10-c7"] * 1000,
        {"k" * 10**5: 1},
    ]
)
FIELD_VALUES = st.one_of(
    JSON,
    st.sampled_from([START, "pass", "c10-c7", "red", "draw", 400]),
    st.lists(st.sampled_from([*REAL.moves, "pass", "a1-a2", 7]), max_size=8),
    HUGE_VALUES,
)
FUZZ = settings(
    max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)


def only_record_errors(data) -> None:
    """A record replays, or raises a RecordError in one bounded line."""
    try:
        GameRecord.from_dict(data).replay()
    except RecordError as error:
        message = str(error)
        assert len(message) < 600 and "\n" not in message, message[:600]


@FUZZ
@given(JSON)
def test_fuzz_random_json(data):
    only_record_errors(data)


@FUZZ
@given(
    st.dictionaries(
        st.sampled_from(["start_spn", "moves", "max_moves", "players", "result", "extra"]),
        FIELD_VALUES,
        max_size=5,
    )
)
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
            data["result"][
                draw(st.sampled_from(["winner", "reason", "end", "final_spn", "other"]))
            ] = draw(FIELD_VALUES)
        elif target == "delete" and data:
            del data[draw(st.sampled_from(sorted(data)))]
        elif target == "truncate" and isinstance(data.get("moves"), list):
            data["moves"] = data["moves"][: draw(st.integers(0, len(data["moves"])))]
    return data


@FUZZ
@given(mutated_record())
def test_fuzz_mutated_real_record(data):
    only_record_errors(data)


def true_results(record: GameRecord) -> list[dict]:
    """The results GameRecord.of writes for the game the moves give: one for a finished game;
    for an unfinished one, stopped or resigned by either color (which color resigned is not
    in the moves)."""
    game = GameRecord.from_dict({**record.as_dict(), "result": {}}).replay()[-1]
    if game.is_over:
        return [GameRecord.of(START, game).result]
    return [GameRecord.of(START, game, resigned=color).result for color in (None, "red", "blue")]


RESULT_VALUES = {
    "winner": st.sampled_from(["red", "blue", None]),
    "end": st.sampled_from(["terminated", "truncated", "resigned", "ongoing"]),
    "reason": st.sampled_from(
        [
            REAL.result["reason"],
            TRUNCATED.result["reason"],
            "red resigned",
            "blue resigned",
            ONGOING.result["reason"],
            "red controls 4 colonies, blue 0 (R22)",
            None,
        ]
    ),
    "final_spn": st.sampled_from(
        [REAL.result["final_spn"], ONGOING.result["final_spn"], TRUNCATED.result["final_spn"], None]
    ),
}


@FUZZ
@given(st.sampled_from([REAL, TRUNCATED, ONGOING, RESIGNED]), st.data())
def test_fuzz_stated_results(record, data):
    """Any stated result on a real game's moves: replay accepts it exactly when a result
    GameRecord.of can write for those moves agrees with every stated field (a null reason or
    final_spn states nothing; a record without `end` is read as stopped when the game is not
    over), and otherwise refuses it naming a 'result.' field."""
    stated = {
        key: data.draw(values, label=key)
        for key, values in RESULT_VALUES.items()
        if data.draw(st.booleans(), label=f"state {key}?")
    }
    truths = true_results(record)
    if "end" not in stated:
        truths = [t for t in truths if t["end"] != "resigned"]
    agrees = any(
        all(
            (value is None and key in ("reason", "final_spn")) or truth[key] == value
            for key, value in stated.items()
        )
        for truth in truths
    )
    try:
        GameRecord.from_dict({**record.as_dict(), "result": stated}).replay()
    except RecordError as error:
        assert not agrees, f"a true result refused: {stated}: {error}"
        assert "field 'result." in str(error), str(error)
        return
    assert agrees, f"a false result accepted: {stated}, true: {truths}"


@st.composite
def duplicated_key_text(draw) -> str:
    """A record's JSON with one of its keys (top level or in `result`) given a second time."""
    data = draw(st.one_of(st.just(copy.deepcopy(REAL_DATA)), mutated_record()))
    where = draw(st.sampled_from(["top", "result"]))
    target = (
        data["result"]
        if where == "result" and isinstance(data.get("result"), dict) and data["result"]
        else data
    )
    if not target:
        target["moves"] = []
    key = draw(st.sampled_from(sorted(target)))
    # only the repeated key is wrong: a non-finite number (Infinity, NaN) is a second,
    # separate defect, refused for itself before the object closes
    dumps = functools.partial(json.dumps, allow_nan=False)
    try:
        extra = dumps({key: draw(FIELD_VALUES)})[1:-1]
        text = dumps(target)
        if target is not data:
            outer = dumps({**data, "result": "@@"})
    except ValueError:
        reject()
    text = text[:-1] + ", " + extra + "}" if draw(st.booleans()) else "{" + extra + ", " + text[1:]
    if target is not data:
        text = outer.replace('"@@"', text)
    return text


@FUZZ
@given(duplicated_key_text())
def test_fuzz_duplicate_keys(tmp_path_factory, text):
    """Whatever else is in it, a key given twice in one object is refused by name."""
    path = tmp_path_factory.mktemp("dup") / "record.json"
    path.write_text(text)
    with pytest.raises(RecordError, match="is given twice in one JSON object"):
        GameRecord.load(path)


@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    content=st.one_of(
        st.binary(max_size=60),
        st.text(max_size=60).map(str.encode),
        mutated_record().map(lambda data: json.dumps(data).encode()),
        duplicated_key_text().map(str.encode),
    )
)
def test_fuzz_record_files_through_the_cli(tmp_path, capsys, content):
    """`satellites replay FILE`: a bad file is one error line and status 2."""
    path = tmp_path / "fuzz.json"
    path.write_bytes(content)
    status = cli.main(["replay", str(path)])
    captured = capsys.readouterr()
    assert status in (0, 2), captured.err
    if status == 2:
        assert captured.err.startswith("error: ") and "Traceback" not in captured.err
        assert captured.err.count("\n") == 1 and len(captured.err) < 2000, captured.err[:2000]
