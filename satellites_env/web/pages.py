"""The pieces every page shares: the HTML document, its inlined assets, safe embedded data.

Pages are single files: the style sheet and the script are inlined (from `assets/`), nothing
is fetched from the network, so a replay opens from disk and can be mailed around.
"""

from __future__ import annotations

import base64
import gzip
import json
from functools import cache
from html import escape
from importlib import resources


@cache
def asset(name: str) -> str:
    """The text of `assets/NAME` (a style sheet or a script shipped with the package)."""
    folder = resources.files(__package__).joinpath("assets")
    return folder.joinpath(name).read_text(encoding="utf-8")


def script_json(data: object) -> str:
    """`data` as JSON that is safe inside a ``<script>`` element (no ``</script>``, no
    ``<!--``): every ``<``, ``>`` and ``&`` is written as a JSON escape."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def packed_json(data: object) -> str:
    """`data` as gzip-compressed JSON in base64; the pages unpack it with the browser's own
    `DecompressionStream` (successive positions repeat most of their SVG: about 40x smaller)."""
    raw = json.dumps(data, separators=(",", ":")).encode()
    return base64.b64encode(gzip.compress(raw, compresslevel=9, mtime=0)).decode("ascii")


def document(
    title: str,
    body: str,
    script: str | None = None,
    data: dict | None = None,
    packed: str | None = None,
) -> str:
    """A whole HTML page: `body` (trusted HTML), the shared style sheet, `data` as JSON in
    ``<script id="page-data">``, `packed` (from `packed_json`) in
    ``<script id="packed-data">`` and the page's script (an asset name, after the shared
    `common.js`)."""
    data_tag = (
        ""
        if data is None
        else f'<script type="application/json" id="page-data">{script_json(data)}</script>\n'
    )
    packed_tag = (
        "" if packed is None else f'<script type="text/plain" id="packed-data">{packed}</script>\n'
    )
    script_tag = (
        "" if script is None else f"<script>\n{asset('common.js')}\n{asset(script)}</script>\n"
    )
    return (
        f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f'<title>{escape(title)}</title>\n<link rel="icon" href="data:,">\n'
        f"<style>\n{asset('style.css')}</style>\n</head>\n"
        f"<body>\n{body}\n{data_tag}{packed_tag}{script_tag}</body>\n</html>\n"
    )
