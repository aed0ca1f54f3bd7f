"""Saving a tournament: its results file, its records folder (records, replay pages,
manifest, index), and where a result goes when its path cannot be written."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path

from ..arena import (
    TournamentResult,
)
from ..core.checks import quoted_path
from ..files import (
    OutputError,
    fallback_folders,
    make_folders,
    stamp,
    write_or_fallback,
    write_output,
)
from .outputs import INDEX, MANIFEST, Reporter, record_name, replay_name


def write_records(
    result: TournamentResult,
    folder: Path,
    progress: Callable[[int, int], None] | None = None,
) -> None:
    """Write a records folder whole.

    Every game record and its HTML replay, `tournament.json` (the results, and which record
    and replay is which game) and `index.html` (every game, linked to its replay).

    Args:
        result: The tournament.
        folder: The records folder (created if missing).
        progress: Called as `progress(done, total)` after each replay page.
    """
    write_replays(result, folder, save_records(result, folder), progress)


def save_records(result: TournamentResult, folder: Path) -> dict:
    """The fast half of `write_records`: each game's record and `tournament.json`, marked
    unfinished until `write_replays` has written the pages. A folder whose writing stopped
    here is continued by the same tournament, not refused as a foreign non-empty folder.

    Returns:
        The manifest, for `write_replays`.
    """
    make_folders(folder)
    manifest = result.as_dict()
    for game in manifest["games"]:
        k = game["pair"] * result.games_per_pairing + game["game"]
        if result.records[k] is not None:
            game["record"] = record_name(k)
            game["replay"] = replay_name(k)
    write_output(
        folder / MANIFEST,
        json.dumps({**manifest, "complete": False}, indent=1) + "\n",
        "--records manifest",
    )
    for k, record in enumerate(result.records):
        if record is not None:
            record.save(folder / record_name(k))
    return manifest


def write_replays(
    result: TournamentResult,
    folder: Path,
    manifest: dict,
    progress: Callable[[int, int], None] | None = None,
) -> None:
    """The slow half of `write_records`: each game's HTML replay, `index.html`, and last the
    manifest as `manifest` says (finished when the tournament is): a folder whose manifest
    says finished holds every file."""
    from ..web import index_html, write_replay

    written = [(k, record) for k, record in enumerate(result.records) if record is not None]
    for done, (k, record) in enumerate(written, start=1):
        write_replay(record, folder / replay_name(k), f"game {k}")
        if progress:
            progress(done, len(written))
    write_output(folder / INDEX, index_html(manifest), "--records index")
    write_output(folder / MANIFEST, json.dumps(manifest, indent=1) + "\n", "--records manifest")


def _records_fallback(result: TournamentResult, records: Path, error: OSError) -> str:
    problem = f"could not write --records {quoted_path(records)}: {error.strerror or error}"
    for folder in fallback_folders():
        try:
            fresh = Path(tempfile.mkdtemp(prefix=f"satellites-records-{stamp()}-", dir=folder))
            write_records(result, fresh)
        except OSError:
            continue
        return f"{problem}; saved the records to {quoted_path(fresh)} instead"
    return f"{problem}; the current and temp folders cannot be written either"


def save_results(
    result: TournamentResult,
    out: Path | None,
    records: Path | None,
    say: Callable[[str], None] | None = None,
) -> tuple[list[str], dict | None]:
    """Write the results file and the records folder's records (not yet its pages).

    Each output that cannot be written goes to a fresh place instead (see the module).

    Args:
        result: The tournament, finished or not.
        out: The results file, if any.
        records: The records folder, if any.
        say: Told of each file written.

    Returns:
        The problems (each says where its output went instead), and the manifest when the
        replay pages are still to be written (`write_pages`).
    """
    problems, manifest = [], None
    if out:
        try:
            write_or_fallback(
                lambda path: write_output(
                    path, json.dumps(result.as_dict(), indent=1) + "\n", "--out"
                ),
                out,
                "--out",
            )
            if say:
                say(f"wrote {out}" + ("" if result.complete else " (marked incomplete)"))
        except OutputError as error:
            problems.append(str(error))
    if records:
        try:
            manifest = save_records(result, records)
        except OSError as error:
            problems.append(_records_fallback(result, records, error))
    return problems, manifest


def write_pages(
    result: TournamentResult,
    records: Path | None,
    manifest: dict | None,
    reporter: Reporter | None = None,
) -> list[str]:
    """The replay pages, the index and the finished manifest of a saved records folder.

    Ctrl-C here loses nothing: the records are saved, and the same tournament writes the
    pages without playing a game.

    Args:
        result: The tournament.
        records: The records folder (None: nothing to do).
        manifest: What `save_results` returned (None: nothing to do).
        reporter: Told of each page written and of a Ctrl-C.

    Returns:
        The problems (where the folder went instead).
    """
    if records is None or manifest is None:
        return []
    reporter = reporter or Reporter()
    written = sum(record is not None for record in result.records)
    try:
        write_replays(result, records, manifest, reporter.pages)
    except KeyboardInterrupt:
        reporter.message(
            f"interrupted while writing the replay pages: the records are saved "
            f"in {records}/, and the same command writes the pages"
        )
        raise
    except OSError as error:
        return [_records_fallback(result, records, error)]
    reporter.message(
        f"wrote {written} game records with their replays, {MANIFEST} and {INDEX} to {records}/"
    )
    return []
