"""The main job's results tables (README.md, docs/training/results.md) from saved runs.

    PYTHONPATH=. .venv/bin/python benchmarks/readme_results.py collect runs/az_quick \\
        runs/az_quick_seed1 runs/az_quick_seed2     # results/az_quick.json from the runs
    PYTHONPATH=. .venv/bin/python benchmarks/readme_results.py write   # the tables from it
    PYTHONPATH=. .venv/bin/python benchmarks/readme_results.py check   # exit 1 if stale

`collect` reads each run folder's `summary.json` (its final table and its config) into
`results/az_quick.json`; `write` renders the tables between the markers `<!-- results:
az_quick -->` and `<!-- end results -->` of each page from that file; `check` (also a test,
`tests/test_readme.py`) fails when a page's table is not the file's, or when a saved run's
config differs from the shipped `az_quick` other than in `seed`, so that a changed config
cannot leave the tables standing.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results" / "az_quick.json"
PAGES = {"README.md": "by_seed", "docs/training/results.md": "by_player"}
START, END = "<!-- results: az_quick -->", "<!-- end results -->"
BLOCK = re.compile(re.escape(START) + r"\n(.*?)" + re.escape(END), re.S)
#: the player of the search's results, keyed `search:OPPONENT`; the raw policy's are keyed
#: by the opponent alone
SEARCH = "search"


class ResultsError(ValueError):
    """A run folder, results file or page that does not hold what the tables need."""


def read_run(run_dir: Path) -> dict[str, Any]:
    """A finished run's seed, config and final table, from its `summary.json`."""
    path = Path(run_dir) / "summary.json"
    try:
        summary = json.loads(path.read_text())
        config, final = summary["config"], summary["final"]
        results = {
            key: {k: int(r[k]) for k in ("games", "a_wins", "draws", "b_wins")}
            for key, r in final["results"].items()
        }
        seed = int(config["seed"])
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ResultsError(f"{path}: not a finished run's summary ({error})") from None
    if not final.get("final"):
        raise ResultsError(f"{path}: the run has no final table yet")
    return {"seed": seed, "config": config, "results": results}


def commit() -> str | None:
    """This checkout's commit, if it is a git clone."""
    try:
        out = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return out.stdout.strip()


def collect(run_dirs: list[Path], out: Path = RESULTS) -> dict[str, Any]:
    """Write the runs' final tables, seed order, to `out`; returns the data."""
    runs = sorted((read_run(d) for d in run_dirs), key=lambda run: run["seed"])
    data = {"commit": commit(), "runs": runs}
    out.write_text(json.dumps(data, indent=1) + "\n")
    return data


def cell(r: dict[str, int]) -> str:
    """W / D / L with the win rate, from the trained agent's side."""
    return f"{r['a_wins']} / {r['draws']} / {r['b_wins']} ({100 * r['a_wins'] / r['games']:.1f}%)"


def opponents(data: dict[str, Any], prefix: str = "") -> list[str]:
    """The final table's opponents of one player (the raw policy's, or with `prefix`
    "search:" the search's), in the order of the first run's table."""
    keys = data["runs"][0]["results"]
    if prefix:
        return [key.removeprefix(prefix) for key in keys if key.startswith(prefix)]
    return [key for key in keys if not key.startswith(SEARCH + ":")]


def by_seed(data: dict[str, Any]) -> str:
    """README's table: a row per seed, the raw policy's then the search's results."""
    raw, searched = opponents(data), opponents(data, f"{SEARCH}:")
    header = ["seed", *(f"raw vs {o}" for o in raw), *(f"search vs {o}" for o in searched)]
    lines = ["| " + " | ".join(header) + " |", "| --- |" + " ---: |" * (len(header) - 1)]
    for run in data["runs"]:
        r = run["results"]
        cells = [cell(r[o]) for o in raw] + [cell(r[f"{SEARCH}:{o}"]) for o in searched]
        lines.append(f"| {run['seed']} | " + " | ".join(cells) + " |")
    against_greedy = [run["results"].get(f"{SEARCH}:greedy") for run in data["runs"]]
    rates = [100 * r["a_wins"] / r["games"] for r in against_greedy if r]
    if len(rates) > 1:
        spread = f"{min(rates):.1f}-{max(rates):.1f}%"
        lines += ["", f"Search against `greedy` over the seeds: {spread}."]
    return "\n".join(lines)


def by_player(data: dict[str, Any]) -> str:
    """The results page's table: a row per seed and player, a column per opponent (a dash
    where that player plays no games against it)."""
    players = (("raw policy", ""), ("search", f"{SEARCH}:"))
    names = list(dict.fromkeys(o for _, prefix in players for o in opponents(data, prefix)))
    games = data["runs"][0]["results"]

    def count(o: str) -> str:
        return "/".join(
            str(games[prefix + o]["games"]) for _, prefix in players if prefix + o in games
        )

    header = ["seed", "player", *(f"vs `{o}` ({count(o)})" for o in names)]
    lines = ["| " + " | ".join(header) + " |", "| --- | --- |" + " ---: |" * len(names)]
    for run in data["runs"]:
        r = run["results"]
        for player, prefix in players:
            cells = [cell(r[prefix + o]) if prefix + o in r else "-" for o in names]
            lines.append(f"| {run['seed']} | {player} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def render(style: str, data: dict[str, Any]) -> str:
    return {"by_seed": by_seed, "by_player": by_player}[style](data)


def load(path: Path = RESULTS) -> dict[str, Any]:
    data = json.loads(path.read_text())
    if not data.get("runs"):
        raise ResultsError(f"{path} holds no runs")
    return data


def write(data: dict[str, Any], root: Path = ROOT) -> list[str]:
    """Render the tables into each page; returns the pages changed."""
    changed = []
    for page, style in PAGES.items():
        path = root / page
        text = path.read_text()
        if not BLOCK.search(text):
            raise ResultsError(f"{page} has no {START} ... {END} block")
        # blank lines around the table: Markdown reads a table glued to a comment as HTML
        block = f"{START}\n\n{render(style, data)}\n\n{END}"
        new = BLOCK.sub(lambda _, block=block: block, text)
        if new != text:
            path.write_text(new)
            changed.append(page)
    return changed


def problems(data: dict[str, Any], root: Path = ROOT) -> list[str]:
    """Why the pages' tables are stale: a page's table that is not the saved runs', a saved
    run whose config is not the shipped az_quick's (its seed aside)."""
    from training.alphazero.trainer import RetiredSettingError, drop_retired
    from training.common.config import ConfigError, config_from_dict, differences, load_config

    found = []
    for page, style in PAGES.items():
        match = BLOCK.search((root / page).read_text())
        if match is None:
            found.append(f"{page}: no {START} ... {END} block")
        elif match.group(1).strip() != render(style, data):
            found.append(f"{page}: its table is not {RESULTS.name}'s (run `write`)")
    shipped = load_config("az_quick", check_agents=False)
    for run in data["runs"]:
        try:
            config = config_from_dict(drop_retired(run["config"]), check_agents=False)
            changed = differences(shipped, config)
        except (ConfigError, RetiredSettingError) as error:
            changed = {f"a config this code refuses ({error})": None}
        changed.pop("seed", None)
        if changed:
            found.append(
                f"seed {run['seed']}: run with a config that differs from the shipped "
                f"az_quick in {', '.join(sorted(changed))}: train the seeds again and `collect`"
            )
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("collect").add_argument("runs", nargs="+", type=Path)
    commands.add_parser("write")
    commands.add_parser("check")
    args = parser.parse_args(argv)
    if args.command == "collect":
        data = collect(args.runs)
        print(f"{RESULTS}: {len(data['runs'])} runs")
        return 0
    if args.command == "write":
        print("changed:", ", ".join(write(load())) or "nothing")
        return 0
    found = problems(load())
    for problem in found:
        print(problem, file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
