"""The built site works as the README says: opened from disk (`site/index.html`, no server),
in Chromium every nav link opens its page, the search finds pages, the API reference shows
signatures with types, and no request leaves the machine."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
LOCAL_SCHEMES = ("file", "data", "blob", "about")
GYM_ENV = "satellites_env.gym_env.SatellitesGymEnv"
GYM_ENV_PARAMETERS = [
    ("opponent", "Opponent"),
    ("agent_color", "str"),
    ("max_moves", "int"),
    ("render_mode", "str | None"),
    ("illegal_action", "str"),
    ("screen_size", "int"),
]


def nav_pages() -> dict[str, str]:
    """Every page of mkdocs.yml's nav, as {built .html path: the h1 of its Markdown}."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    pages: dict[str, str] = {}

    def walk(entries):
        for entry in entries:
            for value in entry.values():
                if isinstance(value, list):
                    walk(value)
                else:
                    text = (ROOT / config.get("docs_dir", "docs") / value).read_text()
                    h1 = re.search(r"^# (.+)$", text, re.M).group(1)
                    pages[value[: -len(".md")] + ".html"] = h1.replace("`", "").strip()

    walk(config["nav"])
    return pages


def watch_requests(page) -> list[str]:
    """Record every request of the page's context (frames and workers included) and abort
    those that would leave the machine, so the test never depends on a network."""
    urls: list[str] = []
    page.context.on("request", lambda request: urls.append(request.url))

    def route(route):
        if urlsplit(route.request.url).scheme in LOCAL_SCHEMES:
            route.continue_()
        else:
            route.abort()

    page.context.route("**/*", route)
    return urls


def assert_all_local(urls: list[str]) -> None:
    remote = sorted({url for url in urls if urlsplit(url).scheme not in LOCAL_SCHEMES})
    assert not remote, f"requests that leave the machine: {remote}"


def file_of(url: str) -> Path:
    return Path(unquote(urlsplit(url).path))


def test_the_site_builds_strictly(site):
    assert (site / "index.html").is_file() and (site / "reference" / "envs.html").is_file()
    assert (site / "search" / "search_index.js").is_file()  # the offline plugin's search


def test_the_site_fetches_nothing_from_the_internet(site):
    """No page names a script, stylesheet, font or image on another host (links may)."""
    resource = re.compile(
        r"<(?:script|img|link|source|iframe)\b[^>]*?\b(?:src|href)="
        r"[\"']?(?:https?:)?//",
        re.I,
    )
    for html in site.rglob("*.html"):
        text = html.read_text()
        assert not resource.search(text), (html.relative_to(site), resource.search(text)[0])
        assert "fonts.googleapis" not in text and "@import url(" not in text


def test_every_nav_link_opens_its_page_from_disk(site, page):
    requests = watch_requests(page)
    expected = nav_pages()
    page.goto((site / "index.html").as_uri())
    links = page.eval_on_selector_all(
        "nav.md-nav--primary a.md-nav__link[href]",
        "links => links.map(a => a.href).filter(h => !h.includes('#'))",
    )
    opened = {}
    for url in dict.fromkeys(links):
        target = file_of(url)
        assert target.is_file(), f"nav link {url} is not a file (a folder listing?)"
        page.goto(url)
        h1 = page.locator("article h1").first.inner_text().replace("¶", "").strip()
        opened[target.relative_to(site).as_posix()] = h1
        # every nav link on this page (relative to its own folder) is a file too
        for href in page.eval_on_selector_all(
            "nav.md-nav--primary a.md-nav__link[href]", "links => links.map(a => a.href)"
        ):
            assert file_of(href).is_file(), f"{url}: nav link {href} is not a file"
    assert opened == expected
    assert_all_local(requests)


def test_the_search_box_finds_pages_from_disk(site, page):
    requests = watch_requests(page)
    page.goto((site / "index.html").as_uri())
    box = page.locator("input.md-search__input")
    assert box.is_visible()
    box.click()
    page.keyboard.type("SatellitesGymEnv", delay=30)
    results = page.locator(".md-search-result__item")
    results.first.wait_for(state="visible", timeout=20_000)
    hrefs = page.eval_on_selector_all(
        ".md-search-result__item a[href]", "links => links.map(a => a.href)"
    )
    assert any(file_of(h).name == "envs.html" and "reference" in h for h in hrefs), hrefs
    page.goto(hrefs[0])
    assert file_of(page.url).is_file()
    assert_all_local(requests)


def test_the_reference_shows_the_gym_envs_parameters_with_types(site, page):
    requests = watch_requests(page)
    page.goto((site / "reference" / "envs.html").as_uri())
    heading = page.locator(f'[id="{GYM_ENV}"]')
    assert heading.is_visible()
    body = heading.locator("xpath=..")
    signature = body.locator(".doc-signature").first.inner_text()
    assert signature.lstrip().startswith("SatellitesGymEnv(")
    for name, annotation in GYM_ENV_PARAMETERS:
        assert re.search(rf"\b{name}: {re.escape(annotation)} = ", signature), (name, signature)
    assert "max_moves: int = 400," in signature  # the constant's value, not its name
    table = body.locator("table").first
    rows = {
        cells[0].strip(): cells
        for cells in table.locator("tbody tr").evaluate_all(
            "rows => rows.map(r => [...r.cells].map(c => c.innerText))"
        )
    }
    for name, annotation in GYM_ENV_PARAMETERS:
        assert name in rows, f"{name} is not in the parameters table: {sorted(rows)}"
        assert rows[name][1].strip() == annotation, rows[name]
        assert rows[name][2].strip(), f"{name} has no description"
    # a cross-reference in a docstring is a link, not literal Markdown or a Sphinx role
    text = page.locator("article").inner_text()
    assert ":class:" not in text and "][satellites_env" not in text
    assert body.locator('a[href="agents.html#satellites_env.agents.Agent"]').count() >= 1
    assert_all_local(requests)


@pytest.mark.parametrize("name", ["env", "raw_env"])
def test_the_reference_documents_the_env_factories(site, name):
    html = (site / "reference" / "envs.html").read_text()
    assert f'id="satellites_env.satellites_v0.{name}"' in html
