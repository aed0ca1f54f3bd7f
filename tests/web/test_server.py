"""The play server over HTTP (a live uvicorn on 127.0.0.1): legality from the engine, errors
that change nothing, separate games, the record download, `satellites serve` itself."""

from __future__ import annotations

import json
import os
import re
import select
import signal
import socket
import subprocess
import sys
import time
import urllib.parse

import pytest
from conftest import APPS, call, live_server
from helpers import DISPLACEMENT_SPN, PASS_SPN
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from satellites_env.agents import AgentSpecError
from satellites_env.core import Game, IllegalActionError, NotationError
from satellites_env.core.board import PASS_ACTION
from satellites_env.record import GameRecord
from satellites_env.web.server import GameStore, StoreFullError, create_app


@pytest.fixture(scope="module")
def server():
    # Room for every game the fuzzing starts: none of them ends, and live games stay.
    with live_server("random", max_moves=400, max_games=5000) as url:
        yield url


def new_game(server, **body):
    status, state, _ = call(server + "api/games", "POST", body)
    assert status == 201, state
    return state


def move(server, state, body):
    return call(server + f"api/games/{state['id']}/move", "POST", body)[:2]


def current(server, state):
    status, answer, _ = call(server + f"api/games/{state['id']}")
    assert status == 200
    return answer


def test_page_and_new_games(server):
    status, html, _headers = call(server)
    assert status == 200 and 'id="board"' in html and 'rect class="hit"' in html
    red = new_game(server, color="red", seed=3)
    assert red["you"] == "red" and red["your_turn"] and red["moves"] == []
    assert red["spn"] == Game.new(seed=3).to_spn()
    blue = new_game(server, color="blue", seed=3)
    assert blue["you"] == "blue" and len(blue["moves"]) == 1 and blue["movers"] == ["red"]
    assert red["id"] != blue["id"]
    # The legal moves by square are exactly the engine's.
    game = Game.new(seed=3)
    listed = sorted(f"{sq}-{t['to']}" for sq, targets in red["legal"].items() for t in targets)
    engine_moves = sorted({m.split(">")[0] for m in game.legal_moves()})
    assert listed == engine_moves


def test_moves_by_id_notation_and_displacement(server):
    state = new_game(server, color="red", spn=DISPLACEMENT_SPN)
    game = Game.from_spn(DISPLACEMENT_SPN)
    (displacement,) = [t for t in state["legal"]["f1"] if t["to"] == "f5"]
    assert displacement["displacement"]
    status, preview, _ = call(
        server + f"api/games/{state['id']}/preview?action={displacement['action']}"
    )
    assert status == 200 and preview["move"] == "f1-f5"
    expected = sorted(m.split(">")[1] for m in game.legal_moves() if m.startswith("f1-f5>"))
    assert sorted(p["to"] for p in preview["pushes"]) == expected
    assert 'class="push"' in preview["layer"]
    assert current(server, state)["spn"] == DISPLACEMENT_SPN  # a preview changes nothing
    # The first step alone is refused: a displacement needs its push.
    status, answer = move(server, state, {"action": displacement["action"]})
    assert status == 400 and "push" in answer["error"]
    push = preview["pushes"][0]
    status, after = move(server, state, {"actions": [displacement["action"], push["action"]]})
    assert status == 200 and after["moves"][0] == push["move"]
    game.play_move(push["move"])
    for reply in after["reply"]:
        game.play_move(reply)
    assert after["spn"] == game.to_spn() and after["your_turn"]
    # Notation works too.
    text = game.legal_moves()[0]
    status, after = move(server, after, {"move": text})
    assert status == 200 and after["moves"][len(game.history)] == text


def test_illegal_requests_are_explained_and_change_nothing(server):
    state = new_game(server, color="red", spn=DISPLACEMENT_SPN)
    game = Game.from_spn(DISPLACEMENT_SPN)
    legal = set(game.legal_moves())
    targets = [f"f1-{f}{r}" for f in "abcdefghij" for r in range(1, 6)]
    cases = [
        t for t in targets if t not in legal and not any(m.startswith(t + ">") for m in legal)
    ][:6]
    assert len(cases) == 6
    for text in [*cases, "pass", "c10-c11", "f1-f5"]:  # f1-f5 is a displacement: no push
        with pytest.raises((IllegalActionError, NotationError)) as error:
            game.play_move(text)
        status, answer = move(server, state, {"move": text})
        assert status == 400 and answer["error"] == str(error.value), text
    status, answer = move(server, state, {"action": PASS_ACTION})
    assert status == 400 and "(R19)" in answer["error"]
    for body in (
        {},
        {"action": True},
        {"action": "12"},
        {"action": 1, "move": "pass"},
        {"actions": []},
        {"actions": [1, 2, 3]},
        {"move": 5},
        {"color": "red"},
    ):
        status, answer = move(server, state, body)
        assert status == 400 and answer["error"], body
    status, answer, _ = call(server + f"api/games/{state['id']}/move", "POST", raw=b"{nope")
    assert status == 400 and "not valid JSON" in answer["error"]
    status, answer, _ = call(server + f"api/games/{state['id']}/move", "POST", raw=b"[1]")
    assert status == 400 and "JSON object" in answer["error"]
    after = current(server, state)
    assert after["spn"] == DISPLACEMENT_SPN and after["moves"] == []
    # Unknown games, bad new-game requests, a bad preview.
    assert call(server + "api/games/nope")[0] == 404
    assert call(server + "api/games/nope/move", "POST", {"move": "pass"})[0] == 404
    for body in (
        {"color": "green"},
        {"seed": -1},
        {"seed": True},
        {"spn": "not an spn"},
        {"spn": 3},
        {"colour": "red"},
    ):
        status, answer, _ = call(server + "api/games", "POST", body)
        assert status == 400 and answer["error"], body
    for query in ("", "?action=x", "?action=-1", "?action=12"):
        status, answer, _ = call(server + f"api/games/{state['id']}/preview{query}")
        assert status == 400, query


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False)
    | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
bodies = json_values | st.fixed_dictionaries(
    {},
    optional={
        "action": json_values
        | st.integers(0, 3216)
        | st.integers(3210, 3225)
        | st.sampled_from([-1, 2**31, 2**63, 10**300]),
        "actions": st.lists(st.integers(0, 3216), max_size=3),
        "move": st.text(max_size=12) | st.sampled_from(["pass", "f1-f5", "f1-f5>f7", "a1-a2"]),
    },
)


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(body=bodies)
def test_fuzzed_move_requests_answer_400_or_play_a_legal_move(server, body):
    state = new_game(server, color="red", spn=DISPLACEMENT_SPN, seed=1)
    status, answer, _ = call(
        server + f"api/games/{state['id']}/move", "POST", raw=json.dumps(body).encode()
    )
    assert status in (200, 400), (status, answer)
    if status == 400:
        assert isinstance(answer["error"], str) and answer["error"]
        assert current(server, state)["spn"] == DISPLACEMENT_SPN
    else:  # it was a legal move: the engine agrees with the new position
        game = Game.from_spn(DISPLACEMENT_SPN)
        for text in answer["moves"]:
            game.play_move(text)
        assert game.to_spn() == answer["spn"]


spns = st.one_of(
    st.text(max_size=30),
    st.sampled_from([DISPLACEMENT_SPN, PASS_SPN]),
    st.sampled_from([DISPLACEMENT_SPN, PASS_SPN]).map(lambda spn: spn[:-1] + "x"),
)
new_game_bodies = json_values | st.fixed_dictionaries(
    {},
    optional={
        "color": st.sampled_from(["red", "blue"]) | json_values,
        "seed": st.integers(-5, 2**33)
        | st.integers(2**32 - 3, 2**32 + 3)
        | st.sampled_from([10**30, 10**300, -(2**63)])
        | json_values,
        "spn": spns | json_values,
        "extra": json_values,
    },
)


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(body=new_game_bodies)
def test_fuzzed_new_game_requests_answer_201_or_400(server, body):
    status, answer, _ = call(server + "api/games", "POST", raw=json.dumps(body).encode())
    assert status in (201, 400), (status, answer)
    if status == 400:
        assert isinstance(answer["error"], str) and answer["error"]
    else:
        assert answer["you"] == body.get("color", "red")
        assert current(server, answer)["spn"] == answer["spn"]


@pytest.mark.parametrize("extra", [-1, 0, 1])
def test_bodies_near_the_size_ceiling(server, extra):
    from satellites_env.web.server import MAX_BODY

    body = b'{"color": "red", "spn": null}'
    raw = body[:-1] + b" " * (MAX_BODY + extra - len(body)) + b"}"
    assert len(raw) == MAX_BODY + extra
    status, answer, _ = call(server + "api/games", "POST", raw=raw)
    assert (status == 201) == (extra <= 0), (status, answer)
    if extra > 0:
        assert status == 400 and f"larger than {MAX_BODY} bytes" in answer["error"]


def _raw_post(server, head: bytes) -> socket.socket:
    """A socket that has sent a POST to /api/games with the header lines `head`."""
    host, port = server.split("//")[1].rstrip("/").rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=10)
    sock.sendall(
        b"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Content-Type: application/json\r\n" + head + b"\r\n"
    )
    return sock


def test_a_declared_length_over_the_ceiling_is_refused_before_the_body_is_read(server):
    """2 GB announced, one byte sent: the answer comes at once (nothing waits for the body,
    nothing holds it)."""
    with _raw_post(server, b"Content-Length: 2100000000\r\n") as sock:
        sock.sendall(b"{")
        answer = b""
        while b"larger" not in answer:
            part = sock.recv(4096)
            if not part:
                break
            answer += part
        answer = answer.decode()
    assert answer.startswith("HTTP/1.1 400") and "larger than 65536 bytes" in answer


def test_an_endless_chunked_body_is_refused_once_past_the_ceiling(server):
    """No declared length: the server stops reading once the ceiling is passed (what was sent
    beyond it sits in the sockets' buffers, a few MB at most)."""
    chunk = b"%x\r\n" % 65536 + b" " * 65536 + b"\r\n"
    sent, answer = 0, b""
    with _raw_post(server, b"Transfer-Encoding: chunked\r\n") as sock:
        try:
            while sent < 256 * 2**20 and not select.select([sock], [], [], 0)[0]:
                sock.sendall(chunk)
                sent += 65536
            answer = sock.recv(4096)
        except OSError:  # the server closed the connection while we were still sending
            answer = answer or b"closed"
    assert sent < 64 * 2**20, sent
    assert answer == b"closed" or answer.startswith(b"HTTP/1.1 400"), answer[:100]


LONG = st.text(min_size=100, max_size=70_000).filter(lambda t: t.strip()) | st.just("x" * 60_000)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    field=st.sampled_from(
        ["color", "seed", "spn", "unknown", "move", "action", "actions", "keys", "preview"]
    ),
    text=LONG,
)
def test_error_answers_quote_at_most_about_80_characters_of_input(server, field, text):
    from satellites_env.web.server import MAX_ERROR

    text = text[:60_000]
    if field in ("color", "seed", "spn"):
        status, answer, _ = call(server + "api/games", "POST", {field: text})
    elif field == "unknown":
        status, answer, _ = call(server + "api/games", "POST", {text: 1})
    elif field == "preview":
        state = new_game(server, color="red", spn=DISPLACEMENT_SPN, seed=1)
        status, answer, _ = call(
            server + f"api/games/{state['id']}/preview?action=" + urllib.parse.quote(text[:6000])
        )
    else:
        state = new_game(server, color="red", spn=DISPLACEMENT_SPN, seed=1)
        body = (
            {"move": text}
            if field == "move"
            else {"action": text}
            if field == "action"
            else {"actions": [text]}
            if field == "actions"
            else {"action": 1, text: 2}
        )
        status, answer = move(server, state, body)
    assert status == 400, (status, str(answer)[:200])
    error = answer["error"]
    assert len(error) <= MAX_ERROR + 3, len(error)
    if text.isascii() and text.isprintable():  # quoted as itself: about 80 characters of it
        assert text[:75] in error or field in ("keys", "unknown", "actions"), error
        assert text[:200] not in error, error


def test_a_number_beyond_the_integer_string_limit_is_a_400(server):
    status, answer, _ = call(server + "api/games", "POST", raw=b'{"seed": 1' + b"0" * 5000 + b"}")
    assert status == 400 and "not valid JSON" in answer["error"]


def test_only_json_from_this_machine_is_answered(server):
    state = new_game(server, color="red", spn=DISPLACEMENT_SPN)
    # A form on another site may post text/plain without asking the browser's permission.
    status, answer, _ = call(
        server + f"api/games/{state['id']}/move",
        "POST",
        raw=b'{"move": "f1-f3"}',
        headers={"Content-Type": "text/plain"},
    )
    assert status == 400 and "application/json" in answer["error"]
    assert current(server, state)["moves"] == []
    # A page reaching the server through another host name (DNS rebinding) is refused.
    status, _, _ = call(server + f"api/games/{state['id']}", headers={"Host": "evil.example"})
    assert status == 400
    assert call(server, headers={"Host": "localhost"})[0] == 200


FOREIGN = [
    {"Origin": "http://evil.example"},
    {"Origin": "null"},
    {"Origin": "http://127.0.0.1:1"},
    {"Origin": "https://localhost"},
    {"Sec-Fetch-Site": "cross-site"},
    {"Sec-Fetch-Site": "same-site"},
    {"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"},
]


@pytest.mark.parametrize("headers", FOREIGN)
@pytest.mark.parametrize("raw", [None, b"", b"{}", b'{"color": "blue"}'])
def test_other_origins_can_neither_create_nor_play_games(server, headers, raw):
    before = len_store(server)
    status, answer, _ = call(server + "api/games", "POST", raw=raw, headers=headers)
    assert status == 403 and "refused" in answer["error"], (status, answer)
    state = new_game(server, color="red", spn=DISPLACEMENT_SPN)
    status, answer, _ = call(
        server + f"api/games/{state['id']}/move",
        "POST",
        raw=b'{"move": "f1-f3"}' if raw else raw,
        headers=headers,
    )
    assert status == 403 and current(server, state)["moves"] == []
    assert len_store(server) == before + 1  # only this test's own game


def len_store(server) -> int:
    """How many games the test server holds."""
    return len(APPS[server].state.store)


@pytest.mark.parametrize(
    "raw, content_type",
    [
        (None, "application/json"),
        (b"", "application/json"),
        (b"  \n", "application/json"),
        (None, "text/plain"),
        (b"", "application/x-www-form-urlencoded"),
        (b'{"color": "red"}', "text/plain"),
        (b"color=red", "application/x-www-form-urlencoded"),
    ],
)
def test_a_new_game_needs_a_json_object_body(server, raw, content_type):
    before = len_store(server)
    status, answer, _ = call(
        server + "api/games", "POST", raw=raw, headers={"Content-Type": content_type}
    )
    assert status == 400 and ("JSON" in answer["error"] or "empty" in answer["error"])
    assert len_store(server) == before


def test_this_servers_own_origin_is_answered(server):
    port = server.rsplit(":", 1)[1].strip("/")
    for headers in (
        {"Origin": f"http://127.0.0.1:{port}", "Sec-Fetch-Site": "same-origin"},
        {"Origin": f"http://localhost:{port}", "Host": f"localhost:{port}"},
        {"Sec-Fetch-Site": "none"},
    ):
        status, answer, _ = call(server + "api/games", "POST", {"color": "red"}, headers=headers)
        assert status == 201, (headers, answer)


origins = st.one_of(
    st.none(),
    st.sampled_from(
        ["null", "http://evil.example", "file://", "http://127.0.0.1", "http://127.0.0.1:80"]
    ),
    st.text(max_size=30),
)
sites = st.one_of(
    st.none(),
    st.sampled_from(["cross-site", "same-site", "same-origin", "none"]),
    st.text(max_size=12),
)
raw_bodies = st.one_of(
    st.none(),
    st.just(b""),
    st.binary(max_size=40),
    new_game_bodies.map(lambda body: json.dumps(body).encode()),
)


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    origin=origins,
    site=sites,
    raw=raw_bodies,
    content_type=st.sampled_from(["application/json", "text/plain", ""]),
)
def test_fuzzed_origins_and_bodies_create_a_game_only_when_same_origin_json(
    server, origin, site, raw, content_type
):
    headers = {"Content-Type": content_type}
    if origin is not None:
        headers["Origin"] = origin
    if site is not None:
        headers["Sec-Fetch-Site"] = site
    printable = all(
        value.isprintable() and value.isascii() and value == value.strip()
        for value in headers.values()
    )
    if not printable:
        return  # not sendable as a header
    before = len_store(server)
    status, answer, _ = call(server + "api/games", "POST", raw=raw, headers=headers)
    foreign = (site is not None and site not in ("same-origin", "none")) or origin is not None
    if foreign:  # no test origin is this server's own
        assert status == 403, (headers, status, answer)
    elif content_type != "application/json" or not (raw or b"").strip():
        assert status == 400, (headers, raw, status, answer)
    assert status in (201, 400, 403) and isinstance(answer, dict) and answer
    assert len_store(server) == before + (status == 201)


@pytest.mark.parametrize("host", ["", " ", "\t", "bad host", "x" * 300])
def test_an_empty_or_blank_host_is_refused(host, capsys):
    from satellites_env import cli

    with pytest.raises(ValueError, match="--host"):
        create_app("random", host=host)
    assert cli.main(["serve", "--host", host, "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --host") and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize(
    "spec, message",
    [
        ("mcts:1000000000000", "at most 100,000 simulations"),
        ("mcts:100001", "at most 100,000 simulations"),
        ("mcts:" + "9" * 5000, "agent spec 'mcts:999"),
        ("mcts:10**12", "agent spec 'mcts:10**12'"),
    ],
)
def test_an_opponent_over_its_ceiling_is_refused_before_serving(spec, message, capsys):
    from satellites_env import cli

    with pytest.raises(AgentSpecError, match=re.escape(message)):
        create_app(spec)
    assert cli.main(["serve", "--opponent", spec, "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and len(err) < 400 and message in err, err


def test_pass_is_offered_only_when_it_is_the_only_move(server):
    state = new_game(server, color="blue", spn=PASS_SPN)  # red (the agent) moves first
    assert len(state["moves"]) == 1 and state["legal"] == {}
    assert state["pass_action"] == PASS_ACTION
    status, after = move(server, state, {"action": PASS_ACTION})
    assert status == 200 and after["moves"][1] == "pass" and after["movers"][1] == "blue"
    red = new_game(server, color="red", spn=PASS_SPN)
    assert red["pass_action"] is None and red["legal"]


def test_games_are_separate_and_the_record_downloads(server):
    one = new_game(server, color="red", seed=11)
    two = new_game(server, color="red", seed=11)
    first = Game.new(seed=11).legal_moves()[0]
    status, after = move(server, one, {"move": first})
    assert status == 200
    assert current(server, two)["moves"] == [] and current(server, two)["spn"] == one["spn"]
    status, record, headers = call(server + f"api/games/{one['id']}/record")
    assert status == 200 and "attachment" in headers["content-disposition"]
    loaded = GameRecord.from_dict(record)
    assert loaded.moves == after["moves"] and loaded.players["red"] == "human"
    assert loaded.players["blue"] == "random" and loaded.result["end"] == "ongoing"
    assert loaded.replay()[-1].to_spn() == after["spn"]


def test_live_games_are_never_dropped_a_full_store_answers_503():
    with live_server("random", max_games=2) as url:
        first = new_game(url, color="red", seed=1)
        second = new_game(url, color="red", seed=2)
        status, answer, headers = call(url + "api/games", "POST", {"color": "red"})
        assert status == 503 and "2 games still being played" in answer["error"]
        assert headers["retry-after"] == "60"
        for state in (first, second):
            status, answer, _ = call(url + f"api/games/{state['id']}")
            assert status == 200 and answer["id"] == state["id"]


def test_ended_and_idle_games_make_room_and_say_so_when_asked_for():
    with live_server("random", max_games=2, max_moves=1) as url:
        ended = new_game(url, color="blue", seed=1)  # red's one move ends it (R20)
        assert ended["result"] is not None
        live = new_game(url, color="red", seed=2)
        third = new_game(url, color="red", seed=3)  # the ended game makes room
        status, answer, _ = call(url + f"api/games/{ended['id']}")
        assert status == 404 and "was dropped to make room" in answer["error"]
        assert "it had ended" in answer["error"]
        assert call(url + f"api/games/{live['id']}")[0] == 200
        assert call(url + f"api/games/{third['id']}")[0] == 200
        assert call(url + "api/games", "POST", {"color": "red"})[0] == 503
    with live_server("random", max_games=1, idle_seconds=0.3) as url:
        idle = new_game(url, color="red", seed=1)
        assert call(url + "api/games", "POST", {"color": "red"})[0] == 503
        time.sleep(0.4)
        new_game(url, color="red", seed=2)
        status, answer, _ = call(url + f"api/games/{idle['id']}")
        assert status == 404 and "nobody had played it for" in answer["error"]
        status, answer, _ = call(url + "api/games/0123456789abcdef")
        assert status == 404 and "ended with the server" in answer["error"]


def test_the_store_keeps_the_most_games_when_games_end():
    store = GameStore("random", max_moves=1, max_games=3)
    for seed in range(20):  # each game ends at once: room is always made
        store.new("blue", seed, None)
        assert len(store) <= 3
    live = [store.new("red", seed, None) for seed in range(3)]
    with pytest.raises(StoreFullError):
        store.new("red", 99, None)
    assert all(store.get(session.id) is session for session in live)


def test_a_bad_opponent_is_refused_before_serving():
    with pytest.raises(AgentSpecError, match="unknown agent spec"):
        create_app("minimax")


def test_satellites_serve_port_0_prints_its_url_and_serves():
    process = subprocess.Popen(
        [sys.executable, "-m", "satellites_env", "serve", "--opponent", "greedy", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        line = process.stdout.readline()
        assert "http://127.0.0.1:" in line, line + process.stderr.read()
        url = line.split("at ", 1)[1].split()[0]
        status, html, _ = call(url)
        assert status == 200 and "greedy" in html
        state = new_game(url, color="blue")
        assert len(state["moves"]) == 1  # greedy opened as red
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            raise
    assert process.returncode in (0, 130), process.stderr.read()


def test_satellites_serve_errors():
    from satellites_env import cli

    assert cli.main(["serve", "--port", "70000"]) == 2
    assert cli.main(["serve", "--opponent", "minimax", "--port", "0"]) == 2
    with live_server() as url:  # a port in use is a clear error, not a traceback
        port = url.rsplit(":", 1)[1].strip("/")
        result = subprocess.run(
            [sys.executable, "-m", "satellites_env", "serve", "--port", port],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode == 2 and "error:" in result.stderr
