"""Headless chromium for the built HTML book: a local server and a WebDriver session.

Used by ``tests/book/test_html.py`` (the browser test over every page) and by
``scripts/book_pdf.py`` (``make pdf``). Everything is local: the book is served on
127.0.0.1, the browser is Debian's ``chromium`` driven through Debian's
``chromedriver`` (passed explicitly, with ``SE_OFFLINE`` set, so that selenium-manager
never looks for or downloads a browser or a driver).
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import re
import shutil
import tempfile
import threading
from html.parser import HTMLParser
from pathlib import Path

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")
FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
)


def missing() -> str | None:
    """Why the browser cannot run here (a sentence), or None when it can."""
    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not (Path(path).is_file() and os.access(path, os.X_OK)):
            return f"{path} not found: install Debian's {package} (apt-get install chromium chromium-driver)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -r requirements.txt)"
    return None


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # no access log on stderr
        pass


@contextlib.contextmanager
def serve(root: str | Path):
    """Serve the directory ``root`` on 127.0.0.1 (a free port); yield the base URL."""
    root = Path(root)
    if not (root / "index.html").is_file():
        raise FileNotFoundError(f"no built book at {root} (index.html missing): run make book")
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def chromium(width: int = 1280, height: int = 900):
    """A headless chromium WebDriver with a fresh profile; browser console log on."""
    reason = missing()
    if reason:
        raise RuntimeError(reason)
    os.environ["SE_OFFLINE"] = "true"  # selenium-manager: never download anything
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="book-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.add_argument(f"--window-size={width},{height}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        driver.set_window_size(width, height)
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


class _NavLinks(HTMLParser):
    """Collect the hrefs of the sidebar's table of contents, in order."""

    def __init__(self):
        super().__init__()
        self.depth, self.hrefs = 0, []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "nav" and "bd-docs-nav" in (attrs.get("class") or ""):
            self.depth = 1
        elif self.depth and tag == "nav":
            self.depth += 1
        elif self.depth and tag == "a" and "reference internal" in (attrs.get("class") or ""):
            self.hrefs.append(attrs.get("href", ""))

    def handle_endtag(self, tag):
        if self.depth and tag == "nav":
            self.depth -= 1


def pages_in_toc_order(root: str | Path) -> list[str]:
    """Paths (relative to ``root``) of the book's pages in table-of-contents order.

    Read from the sidebar of the root page (``index.html`` redirects to it).
    """
    root = Path(root)
    index = (root / "index.html").read_text(encoding="utf-8")
    match = re.search(r'url=([^"\']+)', index)
    first = match.group(1) if match else "index.html"
    parser = _NavLinks()
    parser.feed((root / first).read_text(encoding="utf-8"))
    base = Path(first).parent
    pages = [first]
    for href in parser.hrefs:
        href = href.split("#")[0]
        if not href:
            continue
        path = os.path.normpath(base / href).replace(os.sep, "/")
        if path not in pages and (root / path).is_file():
            pages.append(path)
    return pages


def all_pages(root: str | Path) -> list[str]:
    """Every HTML page of the build: the TOC pages first, then the others (indexes);
    not the slide decks of ``make slides`` (tests/book/test_html.py checks them apart)."""
    root = Path(root)
    pages = pages_in_toc_order(root)
    skip = ("_static/", "_sources/", "_images/", "reports/", "_downloads/", "slides/")
    for path in sorted(root.rglob("*.html")):
        rel = path.relative_to(root).as_posix()
        if rel == "index.html" or rel.startswith(skip) or rel in pages:
            continue
        pages.append(rel)
    return pages
