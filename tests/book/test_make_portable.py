"""Tests for scripts/make_portable.py: chapters for plain Jupyter front ends."""

import importlib.util
import json
import re
from pathlib import Path

import nbformat
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("make_portable", ROOT / "scripts/make_portable.py")
make_portable = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_portable)

CHAPTER = [
    ("code", "x_txt = '0.25'"),
    (
        "markdown",
        "(sec-a)=\n## A section\n\nThe gap is {eval}`x_txt`, see {prf:ref}`thm-a`, {eq}`eq-a`,\n"
        "{numref}`fig-a`, {ref}`the section <sec-a>`, {doc}`other` and {cite:t}`lu2025asymptotic`.\n\n"
        "```{prf:theorem} A result\n:label: thm-a\n\nIt holds, with {term}`ICL error`.\n\n"
        ":::{note}\nNested, {eval}`x_txt`.\n:::\n```\n\n"
        "$$\na = b\n$$ (eq-a)\n\n"
        "```{figure} fig.png\n:name: fig-a\n\nA caption.\n```",
    ),
    ("markdown", "````{exercise} One\n:label: ex-a\nDo it.\n````\n\n```{solution-start} ex-a\n:class: dropdown\n```"),
    ("code", "print('SOLUTION CODE')"),
    ("markdown", "```{solution-end}\n```\n\n```{admonition} Careful\nText.\n```"),
]
PAGE = """<html><head><title>A chapter &#8212; book</title></head><body>
<section id="sec-a"><h2>A section<a class="headerlink" href="#sec-a">#</a></h2>
<div class="proof theorem admonition" id="thm-a"><span id="index-0"></span>
<p class="admonition-title"><span class="caption-number">Theorem 3.1 </span> (A result)</p></div>
<div class="math notranslate nohighlight" id="equation-eq-a"><span class="eqno">(3.2)</span></div>
<figure id="fig-a"><figcaption><span class="caption-number">Fig. 4 </span></figcaption></figure>
</section></body></html>"""


def _book(tmp_path):
    root = tmp_path / "root"
    (root / "book").mkdir(parents=True)
    for name in ("_config.yml", "references.bib"):
        (root / name).write_text((ROOT / name).read_text())
    (root / "_toc.yml").write_text("format: jb-book\nroot: book/toy\n")
    nb = nbformat.v4.new_notebook()
    new = {"code": nbformat.v4.new_code_cell, "markdown": nbformat.v4.new_markdown_cell}
    nb.cells = [new[kind](src) for kind, src in CHAPTER]
    nbformat.write(nb, root / "book" / "toy.ipynb")
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="RAN\n")]
    build = root / "_build"
    (build / "jupyter_execute" / "book").mkdir(parents=True)
    nbformat.write(nb, build / "jupyter_execute" / "book" / "toy.ipynb")
    record = {"version": 1, "docs": {"book/toy": [{"expr": "x_txt", "text": "0.25"}] * 2}}
    (build / "jupyter_execute" / "book_evals.json").write_text(json.dumps(record))
    (build / "html" / "book").mkdir(parents=True)
    (build / "html" / "objects.inv").write_bytes(b"")
    (build / "html" / "book" / "toy.html").write_text(PAGE)
    (build / "html" / "book" / "other.html").write_text("<title>Other page &#8212; book</title>")
    (build / "html" / "book" / "bibliography.html").write_text(BIBLIOGRAPHY)
    return root


#: The HTML book's bibliography page as sphinxcontrib-bibtex writes it: numbered ids. A
#: title may recur: in another entry's note, and in the conference version of an article.
BIBLIOGRAPHY = """<html><head><title>Bibliography &#8212; book</title></head><body>
<div class="citation" id="id7" role="doc-biblioentry">
<span class="label"><span class="fn-bracket">[</span>X26<span class="fn-bracket">]</span></span>
<p>A. Person. Figures for <em>Asymptotic theory of in-context learning by linear attention</em>. 2026.</p>
</div>
<div class="citation" id="id2" role="doc-biblioentry">
<span class="label"><span class="fn-bracket">[</span>LLZV+25<span class="fn-bracket">]</span></span>
<p>Yue M. Lu, Mary I. Letey, Jacob A. Zavatone-Veth, Anindita Maiti, and Cengiz Pehlevan. Asymptotic
theory of in-context learning by linear attention. <em>Proceedings of the National Academy of
Sciences</em>, 122(28):e2502599122, 2025.</p>
</div>
<div class="citation" id="id21" role="doc-biblioentry">
<p>Marco Mondelli and Andrea Montanari. Fundamental limits of weak recovery with applications to phase
retrieval. In <em>Proceedings of the 31st Conference on Learning Theory</em>, 1445&#8211;1450. 2018.</p>
</div>
<div class="citation" id="id20" role="doc-biblioentry">
<p>Marco Mondelli and Andrea Montanari. Fundamental limits of weak recovery with applications to phase
retrieval. <em>Foundations of Computational Mathematics</em>, 19(3):703&#8211;773, 2019.</p>
</div>
</body></html>"""


def _html(nb) -> str:
    """The notebook as a plain front end shows it (nbconvert, or CommonMark cells)."""
    try:
        from nbconvert import HTMLExporter
    except ImportError:  # not a book requirement: CommonMark, what Jupyter renders
        from markdown_it import MarkdownIt

        md = MarkdownIt("commonmark", {"html": True})
        return "\n".join(md.render(c.source) if c.cell_type == "markdown" else c.source for c in nb.cells)
    return HTMLExporter().from_notebook_node(nb)[0]


def test_portable_notebooks_have_no_myst_left(tmp_path):
    pytest.importorskip("pybtex", reason="the citations need pybtex (a dependency of the book build)")
    root = _book(tmp_path)
    assert make_portable.main(["--root", str(root)]) == 0
    base = make_portable.book_url(yaml.safe_load((root / "_config.yml").read_text()))
    assert base.startswith("https://") and base.endswith("/")
    for edition in ("instructor", "student"):
        nb = nbformat.read(root / "_build" / "portable" / edition / "toy.ipynb", 4)
        page = _html(nb)
        for raw in ("{eval}", ":::{", "```{", "{prf:", "{ref}", "{eq}", "{cite", "{doc}", "{term}"):
            assert raw not in page, (edition, raw)
        text = "\n".join(c.source for c in nb.cells)
        assert "The gap is 0.25" in text and "Nested, 0.25." in text
        # a target of this notebook (an equation too): a link within it
        assert "[Theorem 3.1](#thm-a)" in text and '<a id="thm-a"></a>' in text
        assert "[Fig. 4](#fig-a)" in text and '<a id="fig-a"></a>' in text
        assert "[the section](#sec-a)" in text and '<a id="sec-a"></a>' in text
        assert "[(3.2)](#eq-a)" in text and '<a id="eq-a"></a>\n\n$$\na = b' in text
        assert "\\tag{3.2}\n$$" in text  # the equation shows the number the text cites
        assert f"[Other page]({base}book/other.html)" in text
        # the citation links to its entry, as the HTML book's own citation links do
        assert f"[Lu et al. (2025)]({base}book/bibliography.html#id2)" in text
        assert "**Theorem 3.1 (A result).**" in text and "> **Note.**" in text
        assert "**Careful.**" in text and "![A caption.](fig.png)" in text
        (first,) = [c for c in nb.cells if c.cell_type == "code" and c.source == "x_txt = '0.25'"]
        assert first.outputs[0]["text"] == "RAN\n"  # code unchanged, executed outputs kept
        assert ("SOLUTION CODE" in text) == (edition == "instructor")


def test_without_an_instructor_build_the_script_says_so(tmp_path, capsys):
    root = _book(tmp_path)
    (root / "_build" / "jupyter_execute" / "book_evals.json").unlink()
    assert make_portable.main(["--root", str(root)]) == 2
    assert "make book" in capsys.readouterr().err


@pytest.mark.parametrize(
    "url, expected",
    [
        ("https://github.com/Org/repo-name", "https://org.github.io/repo-name/"),
        ("https://github.com/org/repo/", "https://org.github.io/repo/"),
    ],
)
def test_book_url_from_the_repository(url, expected):
    assert make_portable.book_url({"repository": {"url": url}}) == expected


def test_roles_over_line_breaks_figures_without_images_and_the_macros_cell():
    conv = make_portable.Portable("https://x.github.io/b/", {"sec-a": ("book/p", "Section 1")}, {}, "book/p")
    out = conv.markdown("See {ref}`the audit\nsection <sec-a>` here.")
    assert "{ref}" not in out and "the audit" in out and "#sec-a)" in out
    fig = conv.markdown(
        ":::{figure}\n:name: fig-x\nA caption that is longer than eighty characters, so it must not be cut off.\n:::"
    )
    assert "![" not in fig and "must not be cut off." in fig
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("---\nmath:\n  x: y\n---\n$\\def\\E{\\mathbb{E}}$")]
    nb.cells[0].metadata["book_sync"] = "macros"
    assert make_portable.portable_notebook(nb, conv).cells[0].source == "$\\def\\E{\\mathbb{E}}$"


def test_citations_link_to_their_entry_of_the_bibliography(tmp_path):
    pytest.importorskip("pybtex", reason="the citations need pybtex (a dependency of the book build)")
    page = tmp_path / "bibliography.html"
    page.write_text(BIBLIOGRAPHY)
    ids = make_portable.bib_anchors(page, ROOT / "references.bib")
    assert ids["lu2025asymptotic"] == "id2"  # not the entry that quotes its title
    assert (ids["mondelli2018fundamental"], ids["mondelli2019fundamental"]) == ("id21", "id20")
    assert "nonexistent" not in ids and len(ids) == 3  # keys not on the page are left out
    cites = make_portable.cite_texts(ROOT / "references.bib")
    conv = make_portable.Portable("https://x.github.io/b/", {}, cites, "book/p", ids)
    out = conv.markdown("{cite:p}`lu2025asymptotic,mondelli2019fundamental` and {cite:t}`nonexistent`.")
    assert out == (
        "([Lu et al., 2025](https://x.github.io/b/book/bibliography.html#id2); "
        "[Mondelli and Montanari, 2019](https://x.github.io/b/book/bibliography.html#id20)) "
        "and [nonexistent ()](https://x.github.io/b/book/bibliography.html)."
    )


#: The toy chapter's exercise and its solution as the instructor HTML book shows them:
#: the solution just below the exercise.
EXERCISE_HTML = """<div class="exercise admonition" id="ex-a">
<p class="admonition-title"><span class="caption-number">Exercise 3.3 </span> (One)</p></div>
<div class="solution dropdown admonition" id="book/toy-solution-1">
<p class="admonition-title">Solution to<a class="reference internal" href="#ex-a"> Exercise 3.3</a></p></div>
"""


@pytest.mark.parametrize("student_base", [None, "https://school.example/icl-student/"])
def test_student_notebooks_link_to_no_exercise_of_the_instructor_book(tmp_path, student_base):
    """The instructor book shows each solution just below its exercise: the student
    notebooks refer to an exercise by its number as text, or, where the student HTML
    edition is published (--student-base-url), link there (it has no solutions)."""
    pytest.importorskip("pybtex", reason="the citations need pybtex (a dependency of the book build)")
    root = _book(tmp_path)
    page = root / "_build" / "html" / "book" / "toy.html"
    page.write_text(page.read_text().replace("</section>", EXERCISE_HTML + "</section>"))
    toy = root / "book" / "toy.ipynb"
    for path in (toy, root / "_build" / "jupyter_execute" / "book" / "toy.ipynb"):
        nb = nbformat.read(path, 4)
        nb.cells.append(nbformat.v4.new_markdown_cell("Try {numref}`ex-a` and {ref}`this one <ex-a>` first."))
        nbformat.write(nb, path)
    args = ["--root", str(root)] + (["--student-base-url", student_base] if student_base else [])
    assert make_portable.main(args) == 0
    base = make_portable.book_url(yaml.safe_load((root / "_config.yml").read_text()))
    portable = root / "_build" / "portable"
    instructor = "\n".join(c.source for c in nbformat.read(portable / "instructor" / "toy.ipynb", 4).cells)
    student = "\n".join(c.source for c in nbformat.read(portable / "student" / "toy.ipynb", 4).cells)
    # the control: the instructor notebook links to the exercise (and its solution)
    assert "Try [Exercise 3.3](#ex-a) and [this one](#ex-a) first." in instructor  # in the notebook
    assert f"{base}book/toy.html#ex-a" not in student  # no link to the instructor book's exercise
    assert "solution-1" not in student
    if student_base is None:
        assert "Try Exercise 3.3 and this one first." in student
        assert "[Theorem 3.1](#thm-a)" in student  # other links stay
    else:
        assert "Try [Exercise 3.3](#ex-a) and " in student  # the exercise is in the notebook
        assert "[Theorem 3.1](#thm-a)" in student
        assert base not in student.replace(student_base, "")


#: A section as sphinx writes a MyST label's target: an empty span with the label's id
#: just before the heading, whose text has the section number and, here, math.
SECTION_HTML = """<span id="sec-b"></span><h3><span class="section-number">3.1.2. </span>Steps with
<span class="math notranslate nohighlight">\\(v_{21}\\)</span> trained<a class="headerlink" href="#steps" title="Link">#</a></h3>
<span id="sec-c"></span><p>A label on a paragraph.</p>
"""


def _inventory(path, lines):
    """A sphinx inventory (objects.inv, version 2) with the given entries."""
    import zlib

    head = "# Sphinx inventory version 2\n# Project: b\n# Version: \n# The remainder of this file is compressed using zlib.\n"
    path.write_bytes(head.encode() + zlib.compress("".join(f"{ln}\n" for ln in lines).encode()))


def test_section_references_show_the_sections_title_not_its_label(tmp_path):
    """A {ref} without text shows the title the HTML book shows (its math as $...$, no
    section number), from the page or, where the page has no heading there, from
    sphinx's inventory; never the label."""
    pytest.importorskip("sphinx", reason="the inventory is read with sphinx (a dependency of the book build)")
    html_dir = tmp_path / "html"
    (html_dir / "book").mkdir(parents=True)
    (html_dir / "book" / "toy.html").write_text(PAGE.replace("</section>", SECTION_HTML + "</section>"))
    _inventory(
        html_dir / "objects.inv",
        [
            "sec-b std:label -1 book/toy.html#$ Steps with v_{21} trained",
            "sec-c std:label -1 book/toy.html#$ Paragraph title",
        ],
    )
    ids = make_portable.book_targets(html_dir)
    assert ids["sec-b"] == ("book/toy.html", "Steps with\n$v_{21}$ trained")
    assert ids["secnum:sec-b"] == ("book/toy.html", "3.1.2")
    assert ids["sec-c"] == ("book/toy.html", "Paragraph title")  # from the inventory
    assert ids["sec-a"] == ("book/toy.html", "A section")
    conv = make_portable.Portable("https://x.github.io/b/", ids, {}, "book/toy")
    out = conv.markdown("See {ref}`sec-b`, {ref}`sec-c` and {ref}`sec-a`.")
    assert out == (
        "See [Steps with\n$v_{21}$ trained](https://x.github.io/b/book/toy.html#sec-b), "
        "[Paragraph title](https://x.github.io/b/book/toy.html#sec-c) and "
        "[A section](https://x.github.io/b/book/toy.html#sec-a)."
    )


def test_portable_citations_decode_latex_accents_and_labs_name_equation_numbers(tmp_path):
    pytest.importorskip("pybtex", reason="the citations need pybtex (a dependency of the book build)")
    bib = tmp_path / "refs.bib"
    bib.write_text("@article{a, author = {Ravent{\\'o}s, A. and Aky\\\"urek, E. and Ganguli, S.}, year = {2023}}\n")
    assert make_portable.cite_texts(bib) == {"a": ("Raventós et al.", "2023")}
    book = make_portable.cite_texts(ROOT / "references.bib")
    assert book["akyurek2023learning"][0] == "Akyürek et al."
    assert not [who for who, _ in book.values() if set(who) & set("\\{}")]  # no LaTeX left in the book's
    ids = {"equation-fd-closed": ("book/p.html", "(4.4)"), "equation-eq-m-kappa": ("book/p.html", "(2.13)")}
    lab = '"""Error, eq. (fd-closed), with (eq-M-kappa), not (x-y)."""'
    assert make_portable.equation_numbers(lab, ids) == '"""Error, eq. (4.4), with (2.13), not (x-y)."""'


def test_no_portable_link_shows_a_label(tmp_path):
    """The toy chapter's references, with a {ref} to a section without text: no link
    text of either edition is a label of the book."""
    pytest.importorskip("pybtex", reason="the citations need pybtex (a dependency of the book build)")
    root = _book(tmp_path)
    page = root / "_build" / "html" / "book" / "toy.html"
    page.write_text(page.read_text().replace("</section>", SECTION_HTML + "</section>"))
    for path in (root / "book" / "toy.ipynb", root / "_build" / "jupyter_execute" / "book" / "toy.ipynb"):
        nb = nbformat.read(path, 4)
        nb.cells.append(nbformat.v4.new_markdown_cell("(sec-b)=\n### Steps\n\nSee {ref}`sec-b` and {ref}`sec-a`."))
        nbformat.write(nb, path)
    assert make_portable.main(["--root", str(root)]) == 0
    labels = {"sec-a", "sec-b", "thm-a", "eq-a", "fig-a", "ex-a", "other"}
    for edition in ("instructor", "student"):
        text = "\n".join(c.source for c in nbformat.read(root / "_build" / "portable" / edition / "toy.ipynb", 4).cells)
        shown = set(re.findall(r"\[([^\]]*)\]\(", text))
        assert shown and not shown & labels, (edition, shown & labels)
        assert "[Steps with\n$v_{21}$ trained](" in text and "[A section](" in text


def test_code_comments_name_targets_as_the_book_numbers_them():
    """A hidden check cell's comments (its first line is what JupyterLab shows of it
    collapsed) read "Proposition 3.3", not "prop-corner"; strings, code and words that are
    no target of the book stay as they are (the control)."""
    ids = {
        "prop-corner": ("book/p.html", "Proposition 3.3"),
        "fig-dev": ("book/p.html", "Fig. 3.8"),
        "equation-td-ge-limit": ("book/p.html", "(5.7)"),
        "sec-audit": ("book/p.html", "The audit"),
        "secnum:sec-audit": ("book/p.html", "3.2.4"),
        "finite-size": ("book/p.html", "Finite size"),  # a heading's slug, not a label
    }
    source = (
        "# prop-corner: minimizer and split of (td-ge-limit), bars of fig-dev\n"
        'x = f("prop-corner")  # td-ge-limit at kappa = inf; see sec-audit, not non-target\n'
        "y = a - b  # a-b stays, and the finite-size study"
    )
    assert make_portable.comment_labels(source, ids) == (
        "# Proposition 3.3: minimizer and split of (5.7), bars of Fig. 3.8\n"
        'x = f("prop-corner")  # equation (5.7) at kappa = inf; see section 3.2.4, not non-target\n'
        "y = a - b  # a-b stays, and the finite-size study"
    )
    assert make_portable.comment_labels("x = (  # unclosed\n", ids) == "x = (  # unclosed\n"
    # a hidden check cell's claim messages too (strings=True), not other code
    check = 'claims.claim(ok, f"{t}: (td-ge-limit) holds")  # see fig-dev\nf(a-b)'
    assert make_portable.comment_labels(check, ids, strings=True) == (
        'claims.claim(ok, f"{t}: (5.7) holds")  # see Fig. 3.8\nf(a-b)'
    )
