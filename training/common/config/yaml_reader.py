"""Reading a config file's YAML: safe, YAML 1.2's plain scalars, duplicate keys refused,
bounded in bytes and in values with its aliases expanded."""

from __future__ import annotations

import re
import typing
from collections.abc import Callable
from pathlib import Path

import yaml

from .schema import ConfigError, clip

#: a config file larger than this is not a config (and YAML aliases cannot blow it up)
MAX_CONFIG_BYTES = 1 << 20


class _Loader(yaml.SafeLoader):
    """Safe YAML with YAML 1.2's plain scalars (see `parse_yaml`) that refuses duplicate keys."""

    def construct_mapping(
        self, node: typing.Any, deep: bool = False
    ) -> dict[typing.Any, typing.Any]:
        if isinstance(node, yaml.MappingNode):
            seen: dict = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    if key in seen:
                        raise yaml.constructor.ConstructorError(
                            "while constructing a mapping",
                            node.start_mark,
                            f"found duplicate key {key!r} (first at line {seen[key].line + 1})",
                            key_node.start_mark,
                        )
                    seen[key] = key_node.start_mark
                except TypeError:  # an unhashable key: SafeLoader reports it below
                    pass
        mapping: dict[typing.Any, typing.Any] = super().construct_mapping(node, deep)
        return mapping


# PyYAML resolves plain scalars by YAML 1.1: `1:30` is 90, `0x10` 16, `010` 8, `1_000` 1000,
# `yes`/`on` true and `2001-02-03` a date. These resolvers keep only null and the merge key
# from it and read numbers and booleans as YAML 1.2's core schema does, in decimal; every other
# plain scalar is a string, so a number key refuses it instead of reading something else.
_YAML_1_1 = (
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:timestamp",
    "tag:yaml.org,2002:value",
)
_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag not in _YAML_1_1]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)
_Loader.add_implicit_resolver(  # before the float resolver, which also matches `12`
    "tag:yaml.org,2002:int", re.compile(r"^[-+]?[0-9]+$"), list("-+0123456789")
)
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(
        r"""^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?
                |[-+]?\.(?:inf|Inf|INF)
                |\.(?:nan|NaN|NAN))$""",
        re.X,
    ),
    list("-+0123456789."),
)
#: the most nodes a config may hold with its aliases expanded (a shipped one has about 100):
#: aliases and merge keys cannot make a small file cost more than this to read and check
MAX_CONFIG_NODES = 100_000
_INT = re.compile(r"^[-+]?[0-9]+$")
_FLOAT = re.compile(
    r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)"
    r"|\.(?:nan|NaN|NAN))$"
)
_BOOLS = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_NULLS = ("", "~", "null", "Null", "NULL")


def _tagged(tag: str, form: str, read: Callable[[str], typing.Any]) -> None:
    """An explicit `!!TAG` reads only its YAML 1.2 core-schema forms (`form` says which):
    `!!int 1_000`, `!!bool yes` or `!!float 1:30` (YAML 1.1's) is an error, not a value."""

    def construct(loader: _Loader, node: typing.Any) -> typing.Any:
        text = loader.construct_scalar(node)
        try:
            return read(text)
        except (ValueError, KeyError):
            raise yaml.constructor.ConstructorError(
                None, None, f"!!{tag} {clip(text, 40)!r} is not {form}", node.start_mark
            ) from None

    _Loader.add_constructor(f"tag:yaml.org,2002:{tag}", construct)


def _match(
    pattern: re.Pattern[str], convert: Callable[[str], typing.Any]
) -> Callable[[str], typing.Any]:
    def read(text: str) -> typing.Any:
        if not pattern.match(text):
            raise ValueError(text)
        return convert(text)

    return read


def _null(text: str) -> None:
    if text not in _NULLS:
        raise ValueError(text)


def _float(text: str) -> float:
    return float(text.lower().replace(".inf", "inf").replace(".nan", "nan"))


_tagged("int", "a decimal integer (YAML 1.2)", _match(_INT, lambda text: int(text, 10)))
_tagged("float", "a YAML 1.2 number such as 5e-4, .5 or .inf", _match(_FLOAT, _float))
_tagged("bool", "true or false (YAML 1.2)", lambda text: _BOOLS[text])
_tagged("null", "null, ~ or nothing (YAML 1.2)", _null)


def _refused(loader: _Loader, node: typing.Any) -> typing.Any:
    raise yaml.constructor.ConstructorError(
        None,
        None,
        f"the tag {node.tag.replace('tag:yaml.org,2002:', '!!')} is not one of YAML 1.2's "
        f"(a config holds !!str, !!int, !!float, !!bool, !!null, !!seq and !!map)",
        node.start_mark,
    )


for _tag in ("binary", "timestamp", "omap", "pairs", "set", "value", "yaml"):
    _Loader.add_constructor(f"tag:yaml.org,2002:{_tag}", _refused)


class _NotAConfig(ValueError):
    """A YAML document too large, with its aliases expanded, to be a config."""


def _expanded_size(root: typing.Any) -> int:
    """How many nodes the document `root` holds with its aliases expanded (each shared node
    counted where it appears), computed once per node; _NotAConfig above MAX_CONFIG_NODES or
    for a node inside itself (a recursive alias)."""
    sizes: dict[int, int] = {}
    stack: list[tuple[typing.Any, bool]] = [(root, False)]
    open_nodes: set[int] = set()
    while stack:
        node, done = stack.pop()
        if id(node) in sizes:
            continue
        children = (
            [n for pair in node.value for n in pair]
            if isinstance(node, yaml.MappingNode)
            else list(node.value)
            if isinstance(node, yaml.SequenceNode)
            else []
        )
        if done:
            open_nodes.discard(id(node))
            sizes[id(node)] = 1 + sum(sizes[id(child)] for child in children)
            if sizes[id(node)] > MAX_CONFIG_NODES:
                raise _NotAConfig(
                    f"it holds more than {MAX_CONFIG_NODES:,} values with its aliases "
                    f"expanded (line {node.start_mark.line + 1})"
                )
            continue
        if id(node) in open_nodes:
            raise ValueError(
                f"line {node.start_mark.line + 1}: an alias refers to a node inside itself"
            )
        open_nodes.add(id(node))
        stack.append((node, True))
        for child in children:
            if id(child) in open_nodes:
                raise _NotAConfig(f"line {child.start_mark.line + 1}: an alias inside its own node")
            stack.append((child, False))
    return sizes[id(root)]


def read_yaml(path: str | Path) -> typing.Any:
    """The YAML document in `path`, read as `parse_yaml` says."""
    path = Path(path)
    if path.is_dir():
        raise ConfigError(f"config file {str(path)!r} is a directory")
    if not path.is_file():
        raise ConfigError(
            f"config file {str(path)!r} does not exist"
            if not path.exists()
            else f"config file {str(path)!r} is not a regular file"
        )
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_CONFIG_BYTES + 1)
        if len(data) > MAX_CONFIG_BYTES:
            raise ConfigError(
                f"config file {str(path)!r} is larger than "
                f"{MAX_CONFIG_BYTES // 1024} KiB: not a config"
            )
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(
            f"config file {str(path)!r} cannot be read as UTF-8 text: {error}"
        ) from None
    return parse_yaml(text, str(path))


def parse_yaml(text: str, name: str = "<config>") -> typing.Any:
    """The YAML document in `text` (ConfigError naming `name` when it is not one).

    Plain scalars are read as YAML 1.2's core schema reads them, numbers in decimal: `12`,
    `-3`, `010` (ten), `5e-4`, `1e3`, `.5`, `.inf` and `.nan` are numbers; `true` and `false`
    (also `True`, `TRUE`, ...) booleans; `~`, `null` and nothing null. Everything else is a
    string: YAML 1.1's forms (`1:30`, `1_000`, `0b11`, `yes`, `off`, dates) and hexadecimal
    or octal (`0x10`, `0o17`). Duplicate keys are errors. An explicit tag reads only YAML
    1.2's forms (`!!int`, `!!float`, `!!bool`, `!!null`, `!!str`, `!!seq`, `!!map`; YAML 1.1's
    `!!binary`, `!!timestamp`, `!!set`, ... are refused). With its aliases expanded a document
    holds at most MAX_CONFIG_NODES values, so reading and checking it costs at most that."""
    try:
        loader = _Loader(text)
        try:
            node = loader.get_single_node()
            if node is not None:
                _expanded_size(node)
            data = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except _NotAConfig as error:  # too large expanded, or an alias inside itself
        raise ConfigError(f"config file {name!r} is not a config: {error}") from None
    except yaml.MarkedYAMLError as error:  # one line: where, and what
        mark = error.problem_mark or error.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        what = " ".join(str(error.problem or error.context or "").split())
        raise ConfigError(
            f"config file {name!r} is not valid YAML: {where}{clip(what, 200)}"
        ) from None
    except yaml.YAMLError as error:
        raise ConfigError(
            f"config file {name!r} is not valid YAML: {clip(' '.join(str(error).split()), 200)}"
        ) from None
    except Exception as error:
        # e.g. ValueError for a timestamp such as 2001-02-30, RecursionError for nesting too
        # deep to read, IndexError for `!!float` with no value
        raise ConfigError(
            f"config file {name!r} is not valid YAML: {type(error).__name__}: {str(error)[:200]}"
        ) from None
    if data is None:
        raise ConfigError(f"config file {name!r} is empty (no keys, only blanks or comments)")
    return data
