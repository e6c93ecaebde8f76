"""Titled indexes of the book's statements and exercises (a local Sphinx extension).

sphinx-proof 0.4.0 lists its "Proof Index" by label slug (``def-td-kappa-q``) and has no
option to show titles, and sphinx-exercise has no index at all. This extension replaces
the proof index by one that lists every numbered statement as "Theorem 3.1" with its
title, grouped by kind, and adds an exercise index (``std-exercise``, "Index of
exercises") that lists every exercise by chapter as "Exercise 1.2" with its title,
the coding labs (labels ``lab-...``) first. Both read the numbers Sphinx assigned and
the titles from the pages' doctrees, so they need no bookkeeping of their own. Math in
a title is shown as text, with the common Greek letters and symbols turned into Unicode.

It also letters the appendix. Sphinx numbers only the pages of a numbered toctree,
so the pages of the unnumbered "Appendix" part shared one counter: "Proposition 4"
(which read like chapter 4's), "Fig. 1", "(3)", the numbers running on from one
appendix page to the next. Each page of a toctree captioned "Appendix" (a part of
``_toc.yml``) gets a letter in its order, A, B, ...: its title shows "A." as a
chapter's shows "1.", and its numbered statements, exercises, figures and equations
are "Proposition A.4", "Exercise A.2", "Fig. A.1", "(A.3)", counted within the page,
wherever Sphinx shows or references them (the pages, the indexes above, ``{prf:ref}``,
``{numref}``, ``{eq}``).
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from docutils import nodes
from sphinx import addnodes
from sphinx.domains import Index

_SYMBOLS = {
    r"\Gam": "Γ",
    r"\Gamma": "Γ",
    r"\alpha": "α",
    r"\kappa": "κ",
    r"\tau": "τ",
    r"\rhonl": "ρ_nl",
    r"\rho": "ρ",
    r"\lambda": "λ",
    r"\infty": "∞",
    r"\to": "→",
    r"\ast": "*",
    r"\le": "≤",
    r"\ge": "≥",
    r"\ne": "≠",
    r"\eICL": "e_ICL",
    r"\eIDG": "e_IDG",
    r"\fperp": "f_⊥",
    r"\zeta": "ζ",
    r"\eta": "η",
    r"\beta": "β",
    r"\mu": "μ",
    r"\nu": "ν",
    r"\sigma": "σ",
    r"\varepsilon": "ε",
    r"\epsilon": "ε",
}
_MACRO = re.compile(r"\\[A-Za-z]+")
_KINDS = ["definition", "theorem", "proposition", "lemma", "corollary"]


def _plain(text: str) -> str:
    """A title as plain text: LaTeX macros to Unicode, no dollars or braces."""
    text = _MACRO.sub(lambda m: _SYMBOLS.get(m.group(0), m.group(0)), text)
    text = text.replace("$", "").replace("{", "").replace("}", "")
    return " ".join(text.split())


def _number(env: Any, docname: str, figtype: str, node_id: str) -> str:
    number = env.toc_fignumbers.get(docname, {}).get(figtype, {}).get(node_id)
    return ".".join(map(str, number)) if number else ""


def _sort_key(number: str) -> tuple:
    """Sort key of a shown number: "3.1" < "7.2" < "A.1" < "B.1" < unnumbered ("")."""
    if not number:
        return ((2, 0),)
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in number.split("."))


#: The caption of the toctree (a part of ``_toc.yml``) whose pages are lettered.
APPENDIX_CAPTIONS = ("appendix", "appendices")


def appendix_letters(env: Any) -> dict[str, str]:
    """docname -> its letter ("A", "B", ...), for the pages of the root document's
    toctree captioned "Appendix", in their order."""
    root = env.config.root_doc
    if root not in env.all_docs:
        return {}
    letters: dict[str, str] = {}
    for toctree in env.get_doctree(root).findall(addnodes.toctree):
        if (toctree.get("caption") or "").strip().lower() not in APPENDIX_CAPTIONS:
            continue
        for _title, docname in toctree["entries"]:
            if docname in env.all_docs and docname not in letters and len(letters) < 26:
                letters[docname] = chr(ord("A") + len(letters))
    return letters


def letter_appendices(app: Any, env: Any) -> list[str]:
    """Give the appendix pages their letter (``env-get-updated``, after Sphinx's own
    numbering): a section number for the title, and the page's own counters."""
    letters = appendix_letters(env)
    for docname, letter in letters.items():
        # the title shows "A." (the HTML writer reads toc_secnumbers); the page's other
        # headings are listed with no number, so they do not fall back to the title's
        doctree = env.get_doctree(docname)
        sections = [s for s in doctree.findall(nodes.section) if s["ids"]]
        secnums: dict[str, tuple] = {"#" + s["ids"][0]: () for s in sections}
        if sections:
            secnums["#" + sections[0]["ids"][0]] = (letter,)
        secnums[""] = (letter,)
        env.toc_secnumbers[docname] = secnums
        # the sidebar's and the previous/next links' title
        toc = env.tocs.get(docname)
        first = (
            next(iter(toc.findall(nodes.reference)), None) if toc is not None else None
        )
        if first is not None:
            first["secnumber"] = (letter,)
        if docname in env.titles:
            env.titles[docname]["secnumber"] = (letter,)
        # statements, exercises, figures, equations: counted within the page
        for figtype, numbers in env.toc_fignumbers.get(docname, {}).items():
            ordered = sorted(numbers, key=lambda node_id: numbers[node_id])
            env.toc_fignumbers[docname][figtype] = {
                node_id: (letter, i) for i, node_id in enumerate(ordered, start=1)
            }
    return list(letters)


def _node_by_id(
    env: Any, cache: dict, docname: str, node_id: str
) -> nodes.Element | None:
    if docname not in cache:
        doctree = env.get_doctree(docname)
        cache[docname] = {
            i: n for n in doctree.findall(nodes.Element) for i in n["ids"]
        }
    return cache[docname].get(node_id)


class TitledProofIndex(Index):
    """The statements of the book (``prf-prf``), by kind, with numbers and titles."""

    name = "prf"
    localname = "Index of statements"
    shortname = "Statements"

    def generate(self, docnames=None):
        env = self.domain.env
        proofs = getattr(env, "proof_list", {})
        groups: dict[str, list] = defaultdict(list)
        cache: dict = {}
        for label, info in proofs.items():
            if docnames and info["docname"] not in docnames:
                continue
            node = _node_by_id(env, cache, info["docname"], label)
            title = ""
            if node is not None and len(node) and isinstance(node[0], nodes.title):
                title = (
                    _plain(node[0].astext()).strip().removeprefix("(").removesuffix(")")
                )
            kind = info["realtype"]
            number = (
                ""
                if info["nonumber"]
                else _number(env, info["docname"], info["countertype"], label)
            )
            name = f"{kind.title()} {number}".strip()
            key = _sort_key(number)
            groups[kind].append((key, [name, 0, info["docname"], label, "", "", title]))
        order = {k: i for i, k in enumerate(_KINDS)}
        content = [
            (kind.title() + "s", [entry for _, entry in sorted(groups[kind])])
            for kind in sorted(groups, key=lambda k: (order.get(k, len(order)), k))
        ]
        return content, True


class ExerciseIndex(Index):
    """Every exercise of the book (``std-exercise``), by chapter, labs first."""

    name = "exercise"
    localname = "Index of exercises"
    shortname = "Exercises"

    def generate(self, docnames=None):
        env = self.domain.env
        registry = getattr(env, "sphinx_exercise_registry", {})
        labs: list = []
        chapters: dict[str, list] = defaultdict(list)
        for label, info in registry.items():
            if info.get("type") not in ("exercise", "exercise-start"):
                continue
            docname = info["docname"]
            if docnames and docname not in docnames:
                continue
            node = info["node"]
            subtitles = [n for n in node.findall(nodes.subtitle)]
            title = _plain(subtitles[0].astext()) if subtitles else ""
            number = _number(env, docname, "exercise", label)
            key = _sort_key(number)
            entry = [f"Exercise {number}".strip(), 0, docname, label, "", "", title]
            (labs if label.startswith("lab-") else chapters[docname]).append(
                (key, entry)
            )
        content = []
        if labs:
            content.append(("Coding labs", [e for _, e in sorted(labs)]))
        for docname in sorted(chapters, key=lambda d: min(k for k, _ in chapters[d])):
            heading = (
                _plain(env.titles[docname].astext())
                if docname in env.titles
                else docname
            )
            content.append((heading, [e for _, e in sorted(chapters[docname])]))
        return content, True


def setup(app):
    app.setup_extension("sphinx_proof")
    app.setup_extension("sphinx_exercise")
    from sphinx_proof.domain import ProofDomain

    # the domain copies this list when the environment is created
    ProofDomain.indices = [TitledProofIndex]
    app.add_index_to_domain("std", ExerciseIndex)
    # after the toctree collector (priority 500), which numbers sections and figures
    app.connect("env-get-updated", letter_appendices, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
