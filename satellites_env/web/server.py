"""`satellites serve`: a local page to play a whole game against an agent (Starlette + uvicorn).

Routes (JSON in and out; an error is ``{"error": "why"}`` with a 4xx status and changes
nothing):

* ``GET /`` - the play page (``?game=ID`` reopens a game; ``?color=blue`` and ``?spn=SPN``
  choose how a new one starts);
* ``POST /api/games`` ``{"color": "red"|"blue", "seed": int?, "spn": str?}`` - a new game
  (201); the agent moves first when it plays red;
* ``GET /api/games/{id}`` - the game's state (see `PlaySession.state`);
* ``POST /api/games/{id}/move`` ``{"action": id}``, ``{"actions": [move, push]}`` or
  ``{"move": "c10-f7>f9"}`` - the human's move, checked by the engine (an illegal one is a
  400 whose message is the engine's explanation), then the agent's reply;
* ``GET /api/games/{id}/preview?action=ID`` - a displacement's first step with its push cells
  (nothing changes);
* ``GET /api/games/{id}/record`` - the game record as a JSON download.

A POST (a new game, a move) must carry a JSON object body (``Content-Type:
application/json``; an empty body is refused too), and one sent from another origin (its
``Origin`` is not this server's, or ``Sec-Fetch-Site`` says cross-site or same-site) is a 403:
a page on another site can neither create games nor play them. Only requests addressed to the
server's loopback names are answered (TrustedHostMiddleware), so a page cannot reach it
through a rebound DNS name either.

Each browser tab plays its own game (its id is in the page's URL). The server holds at most
`max_games` games. A game that is still being played is never dropped: when the store is
full, a new game replaces the least recently used game that has ended or has been idle for
`idle_seconds` (default an hour), and when every game is live the new one is refused with a
503 (``Retry-After``) saying so. Asking for a dropped game answers 404 saying why it was
dropped. Agents think in a worker thread, so one slow agent does not stall the other tabs.
Needs the `web` extra (``pip install 'satellites-env[web]'``).
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from satellites_env.agents import make_agent
from satellites_env.core.board import DEFAULT_MAX_MOVES
from satellites_env.core.checks import quoted
from satellites_env.core.notation import MAX_SPN_MOVES

from .play import PlaySession, RequestError, play_page

MAX_BODY = 64 * 1024  # bytes of a request body; moves are tiny
LOOPBACK_NAMES = ["127.0.0.1", "localhost", "::1", "[::1]"]


def check_host(host: str) -> str:
    """`host` if it can be listened on: an empty or blank address is refused (it would listen
    on every interface while looking like no address at all)."""
    if not isinstance(host, str) or not host.strip():
        raise ValueError(
            "--host must name an address: 127.0.0.1 (this machine only, the "
            "default), or 0.0.0.0 / :: to listen on every address"
        )
    if len(host) > 253 or any(c.isspace() or not c.isprintable() for c in host):
        raise ValueError(f"--host {host[:60]!r} is not an address or host name")
    return host


def allowed_hosts(host: str) -> list[str]:
    """The Host headers the server answers: its loopback names (and `host` itself), so a web
    page elsewhere cannot reach it through a rebound DNS name; any host when it listens on
    every address (0.0.0.0 or ::), as asked."""
    check_host(host)
    if host in ("0.0.0.0", "::"):
        return ["*"]
    return LOOPBACK_NAMES + ([host] if host not in LOOPBACK_NAMES else [])


class StoreFullError(Exception):
    """Every game the server holds is still being played: no room for a new one."""


IDLE_SECONDS = 3600.0  # a game untouched this long may make room for a new one
RETRY_SECONDS = 60


class GameStore:
    """The games in play, by id: at most `max_games`, and never one still being played
    dropped to make room (see the module's notes)."""

    def __init__(
        self,
        opponent: str,
        max_moves: int = DEFAULT_MAX_MOVES,
        max_games: int = 200,
        idle_seconds: float = IDLE_SECONDS,
    ):
        self.opponent = opponent
        self.max_moves = max_moves
        self.max_games = max_games
        self.idle_seconds = idle_seconds
        self._games: OrderedDict[str, PlaySession] = OrderedDict()
        self._dropped: OrderedDict[str, str] = OrderedDict()  # id -> why, the latest ones
        self._lock = threading.Lock()

    def _why_droppable(self, session: PlaySession, now: float) -> str | None:
        if session.lock.locked():  # a request is working on it right now
            return None
        if session.game.is_over:
            return "it had ended"
        idle = now - session.touched
        if idle >= self.idle_seconds:
            return f"nobody had played it for {idle / 60:.0f} minutes"
        return None

    def _make_room(self) -> None:
        """Drop ended or idle games, least recently used first, until one more fits; raise
        StoreFullError when every game is live. Called with the lock held."""
        now = time.monotonic()
        for game_id in list(self._games):
            if len(self._games) < self.max_games:
                return
            why = self._why_droppable(self._games[game_id], now)
            if why is not None:
                del self._games[game_id]
                self._dropped[game_id] = why
                while len(self._dropped) > 10 * self.max_games:
                    self._dropped.popitem(last=False)
        if len(self._games) >= self.max_games:
            raise StoreFullError(
                f"this server holds {len(self._games)} games still being played, its most; "
                f"a new game can start when one of them ends or has been left for "
                f"{self.idle_seconds / 60:.0f} minutes (or restart `satellites serve`)"
            )

    def new(self, color: str, seed: int | None, spn: str | None) -> PlaySession:
        with self._lock:
            self._make_room()  # refused before the agent does any work
        session = PlaySession(self.opponent, color, seed=seed, spn=spn, max_moves=self.max_moves)
        with self._lock:
            self._make_room()
            self._games[session.id] = session
        return session

    def get(self, game_id: str) -> PlaySession | None:
        with self._lock:
            session = self._games.get(game_id)
            if session is not None:
                self._games.move_to_end(game_id)
                session.touched = time.monotonic()
            return session

    def dropped(self, game_id: str) -> str | None:
        """Why the game `game_id` was dropped to make room, if it was (and not long ago)."""
        with self._lock:
            return self._dropped.get(game_id)

    def __len__(self) -> int:
        return len(self._games)


#: the longest `error` the server answers: what quotes input quotes at most about
#: QUOTE_LIMIT characters of it (checks.quoted), and this bounds whatever else a message holds
MAX_ERROR = 400


def _error(message: str, status: int = 400) -> JSONResponse:
    if len(message) > MAX_ERROR:
        message = message[:MAX_ERROR] + "..."
    return JSONResponse({"error": message}, status_code=status)


class CrossOriginError(Exception):
    """A request sent by a page of another origin."""


def _check_origin(request: Request) -> None:
    """Refuse a request a browser sent from another origin (another site, another port, a
    sandboxed or file page): its Origin differs from this server's, or Sec-Fetch-Site says
    so. Clients that send neither (curl, scripts) are not browsers acting for a page."""
    site = request.headers.get("sec-fetch-site")
    if site is not None and site not in ("same-origin", "none"):
        raise CrossOriginError(
            f"a request from another site ({site[:20]}) is refused: play "
            f"from this server's own page"
        )
    origin = request.headers.get("origin")
    if origin is None:
        return
    parts = urlsplit(origin) if origin != "null" else None
    host = request.headers.get("host", "").lower()
    if (
        parts is None
        or parts.scheme not in ("http", "https")
        or parts.path not in ("", "/")
        or parts.netloc.lower() != host
    ):
        raise CrossOriginError(
            f"a request from the origin {quoted(origin)} is refused: play "
            f"from this server's own page"
        )


async def _read_body(request: Request) -> bytes:
    """The body of a request, at most MAX_BODY bytes of it: a declared `Content-Length` over
    the limit is refused before a byte is read, and a chunked or undeclared body as soon as
    more than the limit has arrived, so no request holds more than MAX_BODY in memory."""
    too_large = RequestError(f"the request body is larger than {MAX_BODY} bytes")
    declared = request.headers.get("content-length")
    if declared is not None:
        text = declared.strip()
        if not (text.isascii() and text.isdigit() and len(text) <= 20):
            raise RequestError(
                f"the Content-Length header {quoted(declared)} is not a number of bytes"
            )
        if int(text) > MAX_BODY:
            raise too_large
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            raise too_large
        chunks.append(chunk)
    return b"".join(chunks)


async def _body(request: Request) -> dict:
    """The JSON object of a POST's body. An empty body is refused like any non-JSON one: a
    page elsewhere may send a body-less or text/plain POST without asking, never a JSON one."""
    _check_origin(request)
    raw = await _read_body(request)
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        raise RequestError("send the request body as JSON (Content-Type: application/json)")
    if not raw.strip():
        raise RequestError("the request body is empty: send a JSON object (such as {})")
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        raise RequestError("the request body is not valid JSON") from None
    if not isinstance(data, dict):
        raise RequestError("the request body must be a JSON object")
    return data


async def _body_or_error(request: Request) -> dict | Response:
    """The JSON object of a POST's body (`_body`), or the answer refusing it: 403 for a
    request from another origin, 400 for a bad body."""
    try:
        return await _body(request)
    except CrossOriginError as error:
        return _error(str(error), 403)
    except RequestError as error:
        return _error(str(error))


def create_app(
    opponent: str = "random",
    max_moves: int = DEFAULT_MAX_MOVES,
    max_games: int = 200,
    host: str = "127.0.0.1",
    idle_seconds: float = IDLE_SECONDS,
) -> Starlette:
    """The ASGI app serving the play page against `opponent` (an agent spec, checked now:
    a bad one, a simulation count over its ceiling included, raises AgentSpecError before
    anything is served), for a server listening on `host` (see `allowed_hosts`)."""
    hosts = allowed_hosts(host)
    make_agent(opponent, seed=0)  # fail fast: a bad spec or checkpoint is an error now
    store = GameStore(opponent, max_moves, max_games, idle_seconds)

    def session_of(request: Request) -> PlaySession:
        game_id = request.path_params["game_id"]
        session = store.get(game_id)
        if session is None:
            why = store.dropped(game_id)
            shown = repr(game_id[:40])
            raise LookupError(
                f"game {shown} was dropped to make room for new games: {why}; start a new game"
                if why
                else f"no game {shown} on this server (it ended with the server): start a new game"
            )
        return session

    async def guarded(work: Callable[[], Response]) -> Response:
        """Run `work()` in a thread; map the documented errors to 4xx and 503 answers."""
        try:
            return await run_in_threadpool(work)
        except LookupError as error:
            return _error(str(error), 404)
        except StoreFullError as error:
            return JSONResponse(
                {"error": str(error)}, status_code=503, headers={"Retry-After": str(RETRY_SECONDS)}
            )
        except ValueError as error:  # IllegalActionError, NotationError, RequestError
            return _error(str(error))

    async def page(request: Request) -> HTMLResponse:
        return HTMLResponse(play_page(opponent))

    async def new_game(request: Request) -> Response:
        body = await _body_or_error(request)
        if isinstance(body, Response):
            return body
        unknown = sorted(set(body) - {"color", "seed", "spn"})
        if unknown:
            return _error(
                f"unknown keys {quoted(unknown)}; a new game takes 'color', 'seed', 'spn'"
            )
        color, seed, spn = body.get("color", "red"), body.get("seed"), body.get("spn")
        if seed is not None and (
            isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= 2**32 - 1
        ):
            return _error(f"'seed' must be an integer from 0 to {2**32 - 1}, got {quoted(seed)}")
        if spn is not None and not isinstance(spn, str):
            return _error(f"'spn' must be a position in SPN (a string), got {quoted(spn)}")
        if not isinstance(color, str):
            return _error(f"'color' must be 'red' or 'blue', got {quoted(color)}")

        def work():
            session = store.new(color, seed, spn or None)
            with session.lock:
                return JSONResponse(session.state(), status_code=201)

        return await guarded(work)

    async def get_state(request: Request) -> Response:
        def work():
            session = session_of(request)
            with session.lock:
                return JSONResponse(session.state())

        return await guarded(work)

    async def move(request: Request) -> Response:
        body = await _body_or_error(request)
        if isinstance(body, Response):
            return body

        def work():
            session = session_of(request)
            with session.lock:
                session.move(body)
                return JSONResponse(session.state())

        return await guarded(work)

    async def preview(request: Request) -> Response:
        text = request.query_params.get("action", "")
        if not (text.isascii() and text.isdigit() and len(text) <= 6):
            return _error(f"preview needs ?action=ID (an action id), got {quoted(text)}")

        def work():
            session = session_of(request)
            with session.lock:
                return JSONResponse(session.preview(int(text)))

        return await guarded(work)

    async def record(request: Request) -> Response:
        def work():
            session = session_of(request)
            with session.lock:
                text = json.dumps(session.record().as_dict(), indent=1) + "\n"
            return Response(
                text,
                media_type="application/json",
                headers={
                    "Content-Disposition": f'attachment; filename="satellites-{session.id}.json"'
                },
            )

        return await guarded(work)

    routes = [
        Route("/", page),
        Route("/api/games", new_game, methods=["POST"]),
        Route("/api/games/{game_id}", get_state),
        Route("/api/games/{game_id}/move", move, methods=["POST"]),
        Route("/api/games/{game_id}/preview", preview),
        Route("/api/games/{game_id}/record", record),
    ]
    app = Starlette(
        routes=routes, middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=hosts)]
    )
    app.state.store = store
    return app


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on (host, port); port 0 picks a free port."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


def serve(
    opponent: str = "random",
    host: str = "127.0.0.1",
    port: int = 8000,
    max_moves: int = DEFAULT_MAX_MOVES,
    announce: Callable[[str], object] = print,
) -> None:
    """Serve the play page until Ctrl-C; `announce(url)` is called once it listens."""
    import uvicorn

    check_host(host)
    if not 1 <= max_moves <= MAX_SPN_MOVES:
        raise ValueError(f"max_moves must be from 1 to {MAX_SPN_MOVES}, got {max_moves}")
    app = create_app(opponent, max_moves, host=host)
    sock = bind(host, port)
    config = uvicorn.Config(app, log_level="warning", access_log=False)
    server = uvicorn.Server(config)
    announce(url_of(sock))
    try:
        asyncio.run(server.serve(sockets=[sock]))
    finally:
        sock.close()
