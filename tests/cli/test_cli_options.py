"""The command line as a user's tool: every option of every command has help, and no help
names a module, a Python class or a property of one machine; `--version`; `satellites config
list` and `show`; an empty output path is refused before anything runs."""

from __future__ import annotations

import argparse
import ast
import re
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from satellites_env import cli
from satellites_env.cli.parser import build_parser

ROOT = Path(__file__).resolve().parents[2]


def run(args, capsys):
    status = cli.main(args)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def parsers(parser: argparse.ArgumentParser, path: tuple = ()):
    """(command path, parser) of the parser and every subcommand's, depth first."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from parsers(child, (*path, name))


def helps(parser: argparse.ArgumentParser):
    """(command path, option, help) of every argument and subcommand of every parser."""
    for path, command in parsers(parser):
        yield path, "description", command.description or ""
        for action in command._actions:
            if isinstance(action, argparse._SubParsersAction):
                for choice in action._choices_actions:
                    yield path, choice.dest, choice.help
            else:
                yield path, "/".join(action.option_strings) or action.dest, action.help


def class_names() -> set[str]:
    """The names of the classes the two packages define."""
    names = set()
    for package in ("satellites_env", "training"):
        for module in (ROOT / package).rglob("*.py"):
            names |= {
                node.name
                for node in ast.walk(ast.parse(module.read_text()))
                if isinstance(node, ast.ClassDef)
            }
    return names


def test_every_option_of_every_command_has_help():
    commands = dict(parsers(build_parser()))
    assert {("train",), ("config", "show"), ("ladder", "show"), ("evaluate",)} <= set(commands)
    for path, option, text in helps(build_parser()):
        if option != "description":
            assert text and text != argparse.SUPPRESS and len(text.strip()) > 5, (path, option)


def test_no_help_names_module_internals_or_one_machine():
    classes = {name for name in class_names() if len(name) > 3}
    assert {"Game", "GameRecord", "TournamentResult"} <= class_names()
    for path, option, text in helps(build_parser()):
        assert not re.search(r"\b(satellites_env|training)\.\w", text), (path, option, text)
        assert not re.search(r":(mod|class|func|meth):", text), (path, option, text)
        words = set(re.findall(r"\b[A-Za-z_]\w*\b", text))
        assert not words & classes, (path, option, words & classes)
        assert not re.search(r"\bhere\)|both cores here|this machine's \d", text), (path, option)


def test_the_version_is_the_distribution_s(capsys):
    status, out, _err = run(["--version"], capsys)
    assert status == 0 and out.startswith("satellites-env ")


@pytest.mark.parametrize(
    "args",
    [
        ["train", "--config", "az_quick", "--out", ""],
        ["exploit", "--target", "random", "--minutes", "1", "--out", ""],
        ["evaluate", "--agents", "random", "greedy", "--out", ""],
        ["evaluate", "--agents", "random", "greedy", "--records", ""],
        ["play", "--save", ""],
        ["replay", ""],
        ["replay", "x.json", "--gif", ""],
        ["replay", "x.json", "--html", ""],
        ["demo", "--gif", ""],
        ["ladder", "show", "--db", ""],
        ["ladder", "show", "--html", ""],
    ],
)
def test_an_empty_path_is_refused_before_anything_runs(args, capsys, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the command ran")

    monkeypatch.setattr(cli, "run_command", refuse)
    status, _out, err = run(args, capsys)
    assert status == 2 and "expected a path, got an empty one" in err, err


def test_train_help_points_to_the_one_table_of_times(capsys):
    status, out, _err = run(["train", "--help"], capsys)
    text = " ".join(out.split())
    # the main job's times are stated once, in the README's table; the help and the config's
    # purpose line point there and state none of their own
    config = (ROOT / "configs" / "az_quick.yaml").read_text()
    readme = (ROOT / "README.md").read_text()
    assert status == 0 and "### Times and sizes" in readme and "| `make train` " in readme
    assert "the README's table of times" in text and "README.md" in config.splitlines()[0]
    for where in (text, config):
        assert not re.search(r"about \d+ (minutes|min|s)\b", where)
    assert "compiled on first use" in text
    assert "a value with a / or ending in .yaml or .yml is a file" in text


def _config_command_registered() -> None:
    if not entry_points(group="satellites.commands", name="config"):
        pytest.fail(
            "the installed metadata has no `config` command: reinstall the project "
            '(make install, or pip install -c constraints.txt -e ".[train]")'
        )


def test_config_list_and_show(capsys):
    _config_command_registered()
    status, out, err = run(["config", "list"], capsys)
    assert status == 0 and out.split()[0] == "az_quick" and "quick" in out.split()
    status, out, err = run(["config", "show", "az_quick"], capsys)
    assert status == 0 and out == (ROOT / "configs" / "az_quick.yaml").read_text()
    status, out, err = run(["config", "show", "nope"], capsys)
    assert status == 2 and err.startswith("error: 'nope' is not a shipped config")
