"""Watch and play in the browser: the HTML replay of a game record and the local play server.

* `replay_html` / `write_replay` - one self-contained replay page per game record
  (`satellites replay GAME.json --html game.html`); `index_html` - the index of a
  records folder (`satellites evaluate --records DIR` writes `DIR/index.html`).
* `satellites_env.web.server` - `satellites serve`: a page on 127.0.0.1 to play a whole
  game against any agent spec (needs the `web` extra: Starlette and uvicorn; imported only
  when used).

Every board on these pages is drawn by `satellites_env.render.svg`, and every rules fact
(legal moves, push cells, groups, control, the result) comes from the engine.
"""

from .replay import index_html, replay_data, replay_html, write_replay

__all__ = ["index_html", "replay_data", "replay_html", "write_replay"]
