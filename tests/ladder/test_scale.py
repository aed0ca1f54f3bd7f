"""The shipped rating scale (`ladders/scale.db`, built by `make ladder`) is whole, holds every
pair's games, and the README's table is what `satellites ladder show` reads from it."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from satellites_env.ladder import Ladder
from satellites_env.web.leaderboard import standings

ROOT = Path(__file__).resolve().parents[2]
AGENTS = ["random", "greedy", "mcts:50", "mcts:200", "mcts:1000", "checkpoint:pretrained",
          "az:pretrained:32"]


def test_the_shipped_scale_is_the_readmes_table(tmp_path):
    shutil.copy(ROOT / "ladders" / "scale.db", tmp_path / "scale.db")  # opening never writes it
    with Ladder(tmp_path / "scale.db", create=False) as ladder:
        assert sorted(e.name for e in ladder.agents()) == sorted(AGENTS)
        counts = ladder.db.execute("SELECT COUNT(*) FROM games GROUP BY a, b").fetchall()
        assert len(counts) == 21 and {n for (n,) in counts} == {20}
        for _, record in ladder.records()[:5]:  # stored games replay
            record.replay()
        table = standings(ladder)
    readme = (ROOT / "README.md").read_text()
    for row in table["agents"]:
        line = (f"| {row['rank']} | `{row['name']}` | {row['elo']:+.0f} | "
                f"[{row['low']:+.0f}, {row['high']:+.0f}] | {row['games']} |")
        assert line in readme, line
    assert re.search(rf"\({table['games']} games, 20 per pair", readme)
