"""Print the built HTML book to one PDF with headless chromium (``make pdf``).

Every page of ``_build/html`` is opened in table-of-contents order (served on
127.0.0.1, as in ``tests/book/test_html.py``), MathJax is waited for, the page is printed
with the DevTools ``Page.printToPDF`` command (A4, the theme's print style sheet: no
sidebars), and the pages are concatenated with pypdf, with one outline entry per page.

Usage::

    .venv/bin/python scripts/book_pdf.py [--html _build/html] [--out _build/book.pdf]
"""

from __future__ import annotations

import argparse
import base64
import io
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import browser  # noqa: E402

WAIT_JS = r"""
const done = arguments[arguments.length - 1];
(async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
  await Promise.all([...document.images].map(i => i.complete ? null :
    new Promise(r => { i.onload = i.onerror = r; })));
  // open every dropdown (solutions, hidden code) so that the print shows it
  document.querySelectorAll('details').forEach(d => d.open = true);
  // the page title for the PDF outline, with its math as text (not as TeX)
  const h1 = document.querySelector('article h1') || document.querySelector('h1');
  if (!h1) { done(document.title); return; }
  const head = h1.cloneNode(true);
  head.querySelectorAll('mjx-container').forEach(m => {
    const mml = m.querySelector('mjx-assistive-mml');
    m.replaceWith(document.createTextNode(mml ? mml.textContent : ''));
  });
  head.querySelectorAll('.headerlink').forEach(a => a.remove());
  done(head.textContent.replace(/\s+/g, ' ').trim());
})().catch(e => done('error: ' + e));
"""


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--html", default="_build/html", help="the built book")
    parser.add_argument("--out", default="_build/book.pdf", help="the PDF to write")
    args = parser.parse_args(argv)
    reason = browser.missing()
    if reason:
        print(f"make pdf needs headless chromium: {reason}", file=sys.stderr)
        return 2
    from pypdf import PdfReader, PdfWriter

    html = Path(args.html)
    pages = browser.pages_in_toc_order(html)
    writer = PdfWriter()
    with browser.serve(html) as base, browser.chromium(1280, 900) as driver:
        driver.set_script_timeout(60)
        for page in pages:
            driver.get(base + page)
            title = driver.execute_async_script(WAIT_JS)
            pdf = driver.execute_cdp_cmd(
                "Page.printToPDF",
                {
                    "printBackground": False,
                    "preferCSSPageSize": False,
                    "paperWidth": 8.27,
                    "paperHeight": 11.69,  # A4, in inches
                    "marginTop": 0.6,
                    "marginBottom": 0.6,
                    "marginLeft": 0.6,
                    "marginRight": 0.6,
                    "displayHeaderFooter": False,
                },
            )
            reader = PdfReader(io.BytesIO(base64.b64decode(pdf["data"])))
            first = len(writer.pages)
            for p in reader.pages:
                writer.add_page(p)
            writer.add_outline_item(str(title), first)
            print(f"{page}: {len(reader.pages)} pages")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("wb") as handle:
        writer.write(handle)
    print(f"The PDF is at: {out.resolve()} ({len(writer.pages)} pages)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
