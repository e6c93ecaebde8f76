"""Sphinx extension: keep the book's HTML self-contained and free of console errors.

Loaded from ``_config.yml`` (``sphinx.local_extensions``). On every page it

- drops inline scripts emitted twice (sphinx-thebe and sphinx-togglebutton add their
  configuration on an event that runs twice in a Jupyter Book build; the second
  ``const THEBE_JS_URL`` is a SyntaxError in the browser console);
- drops the Thebe scripts when Thebe is switched off in ``launch_buttons`` (Thebe loads
  its code from a CDN and needs a remote kernel; the book relies on the Binder and Colab
  launch buttons instead);
- drops the stored ipywidgets state (the explorers show a static figure and a note in
  the HTML, see ``lib.teaching.widgets``), which no script reads once the widget
  manager is off;
- makes every figure a link to its image file (``<a class="figure-zoom">``), so that
  a reader on a phone taps a figure to open it at full size and zoom into the ticks
  (with a small badge under the image on a phone, where it covers nothing);
- gives every figure alt text: the first sentence of its caption, formulas as text
  (Sphinx's default is the image's hashed file path, which a screen reader reads out);
  a plot without a caption is described by the section it is in;
- adds the book's own style sheet ``book/_static/book.css`` and script
  ``book/_static/book.js`` (code lines that wrap with a hanging indent; on a narrow
  screen, display equations set smaller to fit, down to 70 %, and a cue on what still
  scrolls sideways), and sets the theme's
  default colour mode (without it the theme logs a console error on first visit).

MathJax itself is served from ``_static/mathjax`` by the ``sphinx-mathjax-offline``
package (MathJax 3.2.2), configured by ``mathjax_path`` in ``_config.yml``.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import tex_text

STATIC = Path(__file__).resolve().parent.parent / "_static"


def _thebe_on(app) -> bool:
    options = app.config.html_theme_options or {}
    return bool((options.get("launch_buttons") or {}).get("thebe"))


def _is_thebe(script) -> bool:
    body = getattr(script, "attributes", {}).get("body", "") or ""
    return (
        "THEBE_JS_URL" in body
        or "sphinx-thebe" in str(script)
        or "thebe@" in str(script)
    )


def _is_widget_state(script) -> bool:
    attributes = getattr(script, "attributes", {})
    return attributes.get("type") == "application/vnd.jupyter.widget-state+json"


def _key(script):
    attributes = getattr(script, "attributes", {})
    return str(script), tuple(sorted((k, str(v)) for k, v in attributes.items()))


def clean_scripts(app, pagename, templatename, context, doctree):
    """Remove duplicated, Thebe-only and widget-state scripts from one page."""
    scripts = context.get("script_files")
    if not scripts:
        return
    keep_thebe = _thebe_on(app)
    seen, kept = set(), []
    for script in scripts:
        key = _key(script)
        if (
            key in seen
            or _is_widget_state(script)
            or (not keep_thebe and _is_thebe(script))
        ):
            continue
        seen.add(key)
        kept.append(script)
    context["script_files"] = kept
    if not keep_thebe and context.get("css_files"):
        context["css_files"] = [
            c for c in context["css_files"] if "thebe" not in str(c)
        ]


# an <img> of a figure (its file is in _images/), possibly already inside a link
_FIGURE_IMG = re.compile(
    r'(<a\b[^>]*>\s*)?(<img\b[^>]*?\bsrc="([^"]*_images/[^"]+)"[^>]*>)(\s*</a>)?'
)
_BADGE = '<span class="figure-zoom-badge" aria-hidden="true"></span>'
_FIGURE = re.compile(r"<figure\b.*?</figure>", re.DOTALL)
_CAPTION_TEXT = re.compile(
    r'<span class="caption-text">(.*?)</span>\s*(?:<a|</p>)', re.DOTALL
)
_ALT = re.compile(r'\balt="[^"]*"')
_TAG = re.compile(r"<[^>]+>")


def _zoom_link(match: re.Match) -> str:
    img, src = match.group(2), match.group(3)
    if match.group(1):  # already a link (Sphinx links scaled images to their file)
        return match.group(1) + img + _BADGE + (match.group(4) or "")
    return (
        f'<a class="reference internal image-reference figure-zoom" href="{src}" '
        f'title="Open the figure at full size">{img}{_BADGE}</a>{match.group(4) or ""}'
    )


def alt_from_caption(caption_html: str, limit: int = 200) -> str:
    """Alt text from a figure's caption: its first sentence, formulas as text."""
    text = html.unescape(_TAG.sub("", caption_html))
    text = " ".join(tex_text.plain(text).split())
    # the first sentence (a full stop followed by a space and a capital or the end)
    first = re.split(r"(?<=[.:;])\s+(?=[A-Z(])", text, maxsplit=1)[0]
    if len(first) > limit:
        first = first[: limit - 1].rsplit(" ", 1)[0] + "…"
    return first.rstrip(":;") or text[:limit]


def _set_alt(img_html: str, alt: str) -> str:
    alt = html.escape(alt, quote=True)
    if _ALT.search(img_html):
        return _ALT.sub(lambda m: f'alt="{alt}"', img_html, count=1)
    return img_html.replace("<img", f'<img alt="{alt}"', 1)


def _figure_alt(match: re.Match) -> str:
    figure = match.group(0)
    caption = _CAPTION_TEXT.search(figure)
    if not caption:
        return figure
    alt = alt_from_caption(caption.group(1))
    return re.sub(r"<img\b[^>]*>", lambda m: _set_alt(m.group(0), alt), figure)


def _output_alt(body: str, title: str) -> str:
    """An image outside a captioned figure (a plot printed by a cell) whose alt is its
    file path gets a description naming the section it is in."""
    headings = [
        (m.start(), html.unescape(_TAG.sub("", m.group(1))).strip())
        for m in re.finditer(r"<h[1-4][^>]*>(.*?)</h[1-4]>", body, re.DOTALL)
    ]

    def fix(m: re.Match) -> str:
        img = m.group(0)
        alt = re.search(r'\balt="([^"]*)"', img)
        if alt and "_images/" not in alt.group(1) and alt.group(1).strip():
            return img
        section = title
        for start, text in headings:
            if start > m.start():
                break
            section = text
        section = tex_text.plain(section.replace("#", "").strip())
        return _set_alt(
            img, f"Plot drawn by the code cell above, in section \u201c{section}\u201d"
        )

    return re.sub(r'<img\b[^>]*?\bsrc="[^"]*_images/[^"]+"[^>]*>', fix, body)


def link_figures(app, pagename, templatename, context, doctree):
    """Wrap every figure image of the page body in a link to the image file (with the
    badge shown on a phone) and give it alt text: the first sentence of its caption,
    or for a plot without a caption, where it is."""
    body = context.get("body")
    if body and "_images/" in body:
        body = _FIGURE.sub(_figure_alt, body)
        body = _output_alt(
            body,
            tex_text.plain(
                html.unescape(_TAG.sub("", context.get("title") or pagename))
            ),
        )
        context["body"] = _FIGURE_IMG.sub(_zoom_link, body)


def add_static(app):
    if str(STATIC) not in app.config.html_static_path:
        app.config.html_static_path.append(str(STATIC))
    # pydata-sphinx-theme logs a console error on a fresh browser profile when no
    # default colour mode is given ("Got invalid theme mode: ."); "auto" follows the OS
    app.config.html_context.setdefault("default_mode", "auto")


def setup(app):
    # search that works offline, formulas as text in titles and snippets
    app.setup_extension("book_search")
    app.connect("builder-inited", add_static)
    app.add_css_file("book.css")
    app.add_js_file("book.js", defer="defer")
    # after myst-nb (priority 500), which adds the per-page widget scripts
    app.connect("html-page-context", clean_scripts, priority=900)
    app.connect("html-page-context", link_figures)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
