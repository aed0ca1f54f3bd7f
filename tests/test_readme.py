"""The README's stand-alone Python examples run as printed (fragments are marked as such)."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
# Whole programs start with their imports (the site's programs: tests/test_docs.py).
PROGRAMS = [b for b in BLOCKS if b.startswith(("import", "from"))]


def test_readme_has_programs_and_marks_fragments():
    assert len(PROGRAMS) >= 3  # the env loop, the vector-env loop, a trained network's games
    text = README.read_text()
    for block in BLOCKS:
        if not block.startswith(("import", "from")):
            before = text[: text.index(block)].rstrip().rsplit("\n", 3)[-3:]
            assert any("fragment" in line for line in before), block[:60]


@pytest.mark.parametrize("index", range(len(PROGRAMS)))
def test_readme_program_runs(index, tmp_path):
    # the snippet that plays `make train`'s network gets the shipped one in its place
    network = tmp_path / "runs" / "az_quick" / "final.pt"
    network.parent.mkdir(parents=True)
    shutil.copy(README.parent / "training" / "alphazero" / "pretrained.pt", network)
    result = subprocess.run(
        [sys.executable, "-c", PROGRAMS[index]],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr[-2000:]


# ----------------------------------------------------------------------------- the results

ROOT = README.parent


def results_script():
    spec = importlib.util.spec_from_file_location(
        "readme_results", ROOT / "benchmarks" / "readme_results.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_results_tables_are_the_saved_runs_with_the_shipped_config():
    """README's and the results page's tables are `results/az_quick.json`'s, and its runs
    used the shipped az_quick (seed aside): a changed config or a hand-edited cell fails."""
    script = results_script()
    assert script.problems(script.load()) == []


def saved_run(folder: Path, seed: int, **config_changes) -> Path:
    from training.common.config import load_config

    config = load_config("az_quick", check_agents=False).to_dict()
    config.update(seed=seed, **config_changes)
    results = {}
    search_final = config["eval"]["search_final"] or config["eval"]["final"]
    for prefix, final in (("", config["eval"]["final"]), ("search:", search_final)):
        for opponent, games in final.items():
            results[prefix + opponent] = {
                "a": "x",
                "b": opponent,
                "games": games,
                "a_wins": games - 3,
                "draws": 1,
                "b_wins": 2,
            }
    folder.mkdir(parents=True)
    summary = {"final": {"final": True, "results": results}, "config": config}
    (folder / "summary.json").write_text(json.dumps(summary))
    return folder


def test_collect_reads_run_folders_and_check_finds_stale_pages(tmp_path):
    script = results_script()
    runs = [saved_run(tmp_path / f"run{seed}", seed) for seed in (7, 5)]
    data = script.collect(runs, tmp_path / "az_quick.json")
    assert [run["seed"] for run in data["runs"]] == [5, 7]
    table = script.by_seed(data)
    # raw vs random and greedy (200 each), search vs greedy (200) and mcts:200 (50)
    row = "| 5 |" + " 197 / 1 / 2 (98.5%) |" * 3 + " 47 / 1 / 2 (94.0%) |"
    assert row in table
    assert "search vs mcts:200" in table and "raw vs mcts:200" not in table
    assert "Search against `greedy` over the seeds: 98.5-98.5%." in table
    pages = tmp_path / "pages"
    for page in script.PAGES:
        (pages / page).parent.mkdir(parents=True, exist_ok=True)
        (pages / page).write_text(f"text\n{script.START}\nold\n{script.END}\nmore\n")
    assert len(script.problems(data, pages)) == 2  # both tables stale
    assert sorted(script.write(data, pages)) == sorted(script.PAGES)
    assert script.problems(data, pages) == []
    readme = pages / "README.md"
    readme.write_text(readme.read_text().replace("197 / 1 / 2", "196 / 2 / 2", 1))
    assert [p.split(":")[0] for p in script.problems(data, pages)] == ["README.md"]
    # a run of another config: its table says nothing about the shipped one
    data["runs"][0]["config"]["total_positions"] += 1
    assert any("total_positions" in p for p in script.problems(data, pages))


def test_collect_refuses_an_unfinished_run(tmp_path):
    script = results_script()
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "summary.json").write_text(json.dumps({"final": {"final": False, "results": {}}}))
    with pytest.raises(script.ResultsError, match="summary"):
        script.collect([folder], tmp_path / "out.json")


# ----------------------------------------------------------------------------- the layout

LAYOUT_NAMES = re.compile(r"^( *)([\w.-]+/?(?:, [\w.-]+/?)*)(?:\s|$)")


def layout_block(page: Path, heading: str) -> str:
    text = page.read_text()
    return re.search(re.escape(heading) + r".*?```\n(.*?)```", text, re.S).group(1)


def layout_paths(block: str) -> list[str]:
    """The paths a layout block names: each line's names (`a.py, b.py`) under the folders
    of the lines less indented above it; a line as indented as the descriptions continues
    one."""
    lines = block.splitlines()
    column = re.match(r"\S+\s+", lines[0]).end()
    folders: list[str] = []
    paths = []
    for line in lines:
        indent = len(line) - len(line.lstrip(" "))
        if indent >= column:
            continue
        match = LAYOUT_NAMES.match(line)
        assert match, line
        names = match.group(2).split(", ")
        folders = folders[: indent // 2]
        paths += ["/".join([*folders, name]) for name in names]
        if names[-1].endswith("/"):
            folders.append(names[-1].rstrip("/"))
    return paths


def tracked_files() -> list[str]:
    try:
        out = subprocess.run(
            ["git", "-C", str(ROOT), "ls-files"], capture_output=True, text=True, check=True
        )
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("needs the git clone")
    return out.stdout.split()


LAYOUTS = [(README, "## Layout"), (ROOT / "docs" / "index.md", "## Project layout")]


@pytest.mark.parametrize(("page", "heading"), LAYOUTS, ids=["README", "docs-index"])
def test_the_layout_blocks_name_the_tree(page, heading):
    """Every path a layout block names exists where it says, and every top-level folder and
    every package of `training/` is in it (the site's block: every package)."""
    paths = layout_paths(layout_block(page, heading))
    assert len(paths) > 8
    for path in paths:
        assert (ROOT / path).exists(), f"{page.name}: {path} is not in the tree"
    files = tracked_files()
    top = {f.split("/")[0] + "/" for f in files if "/" in f and not f.startswith(".")}
    assert top <= set(paths), f"{page.name} lacks {sorted(top - set(paths))}"
    packages = {
        f.rsplit("/", 1)[0] + "/"
        for f in files
        if f.endswith("/__init__.py")
        and f.count("/") > 1
        and (f.startswith("training/") or page != README)
    }
    assert packages <= set(paths), f"{page.name} lacks {sorted(packages - set(paths))}"
