"""Record the text of every ``{eval}`` role, and show recorded text again.

The instructor build (``make book``) executes every chapter inline, so that myst-nb's
``{eval}`` roles can ask the running kernel for their values. This extension wraps
that role: it shows exactly what myst-nb shows, and records, per document and in the
order the roles are read, the expression and the text it rendered. At the end of the
build the record is written next to the executed notebooks, as
``<build>/jupyter_execute/book_evals.json``::

    {"version": 1, "docs": {"book/linear/model": [{"expr": "gap_txt",
                                                   "text": "0.12"}, ...]}}

The student edition (``scripts/make_student.py``) is built from those executed
notebooks without executing them again. Its copy of a chapter has each ``{eval}`` role
replaced by the role ``{eval-recorded}`` whose content is the index of the role's entry
in that document's record; with ``book_evals_record`` set to the record's path, this
extension renders it as the same node myst-nb rendered for the value (an inline
``text_plain`` output), so the two editions show the same text with the same markup.

Only string values are supported (the book binds every ``{eval}`` name to a string):
a role that renders anything but one plain-text output fails the recording build.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from docutils import nodes
from myst_nb.ext.eval import EvalRoleAny
from sphinx.util import logging

logger = logging.getLogger(__name__)

#: The record's file name, in myst-nb's folder of executed notebooks.
RECORD_NAME = "book_evals.json"
RECORD_VERSION = 1
#: The classes myst-nb gives the inline node of a text/plain value.
TEXT_CLASSES = ["output", "text_plain"]


def rendered_text(rendered: list[nodes.Node]) -> str | None:
    """The text of a role's nodes when they show one plain-text value, else None.

    Under Sphinx, myst-nb renders a value as a mime bundle (a container whose children
    are one container per mime type, chosen by a later transform); a ``str`` value
    has only ``text/plain``, one inline node with the classes ``output text_plain``
    and the string without its quotes.
    """
    if len(rendered) != 1:
        return None
    bundle = rendered[0]
    if (
        not isinstance(bundle, nodes.container)
        or bundle.get("nb_element") != "mime_bundle"
    ):
        return None
    if len(bundle) != 1 or bundle[0].get("mime_type") != "text/plain":
        return None
    inner = bundle[0].children
    if len(inner) != 1 or not isinstance(inner[0], nodes.inline):
        return None
    if inner[0].get("classes") != TEXT_CLASSES:
        return None
    return inner[0].astext()


def text_node(
    text: str, source: str | None = None, line: int | None = None
) -> nodes.Node:
    """The nodes myst-nb renders for a string value whose text is ``text``."""
    bundle = nodes.container(nb_element="mime_bundle")
    mime = nodes.container(mime_type="text/plain")
    mime += nodes.inline(text, text, classes=list(TEXT_CLASSES))
    bundle += mime
    for node in bundle.findall():
        node.source, node.line = source, line
    return bundle


class RecordingEvalRole(EvalRoleAny):
    """myst-nb's ``{eval}`` role, recording what it renders."""

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        rendered, messages = super().run()
        if messages:  # evaluation failed: myst-nb's warning fails the strict build
            return rendered, messages
        text = rendered_text(rendered)
        if text is None:
            msg = self.inliner.reporter.error(
                f"{{eval}}`{self.text}` did not render one plain-text output "
                f"({[type(n).__name__ for n in rendered]}): bind the name to a string",
                line=self.line,
            )
            return rendered, [msg]
        env = self.document.settings.env
        records = env.book_evals.setdefault(env.docname, [])
        records.append({"expr": self.text, "text": text})
        return rendered, messages


class RecordedEvalRole:
    """``{eval-recorded}`N```: the text recorded for the N-th eval role of this page."""

    def __call__(self, name, rawtext, text, lineno, inliner, options=None, content=()):
        env = inliner.document.settings.env
        record = _load_record(env.app)
        entries = record.get(env.docname, [])
        try:
            entry = entries[int(text)]
        except (ValueError, IndexError):
            msg = inliner.reporter.error(
                f"{{eval-recorded}}`{text}`: no such entry for {env.docname} in "
                f"{env.config.book_evals_record} ({len(entries)} entries)",
                line=lineno,
            )
            return [inliner.problematic(rawtext, rawtext, msg)], [msg]
        source, line = inliner.reporter.get_source_and_line(lineno)
        return [text_node(entry["text"], source, line)], []


def _load_record(app: Any) -> dict[str, list[dict[str, str]]]:
    cached = getattr(app, "_book_evals_record", None)
    if cached is None:
        path = Path(app.config.book_evals_record)
        if not path.is_absolute():
            path = Path(app.confdir) / path
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("version") != RECORD_VERSION:
            raise ValueError(
                f"{path}: record version {data.get('version')!r}, "
                f"expected {RECORD_VERSION}"
            )
        cached = app._book_evals_record = data["docs"]
    return cached


def _builder_inited(app: Any) -> None:
    if not hasattr(app.env, "book_evals"):
        app.env.book_evals = {}
    # after myst-nb's setup, which registers its own role under the same name
    app.add_role("eval", RecordingEvalRole(), override=True)
    app.add_role("eval-recorded", RecordedEvalRole(), override=True)


def _purge(app: Any, env: Any, docname: str) -> None:
    getattr(env, "book_evals", {}).pop(docname, None)


def _merge(app: Any, env: Any, docnames: set[str], other: Any) -> None:
    if not hasattr(env, "book_evals"):
        env.book_evals = {}
    for docname in docnames:
        if docname in getattr(other, "book_evals", {}):
            env.book_evals[docname] = other.book_evals[docname]


def record_path(outdir: str | Path) -> Path:
    """Where a build whose HTML goes to ``outdir`` writes its record."""
    return Path(outdir).parent / "jupyter_execute" / RECORD_NAME


def _write(app: Any, exception: Exception | None) -> None:
    if exception is not None or app.config.book_evals_record:
        return  # a replaying build (the student edition) records nothing new
    docs = {
        d: v
        for d, v in sorted(getattr(app.env, "book_evals", {}).items())
        if d in app.env.all_docs
    }
    path = record_path(app.outdir)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps(
            {"version": RECORD_VERSION, "docs": docs}, indent=1, ensure_ascii=False
        )
        + "\n",
        encoding="utf-8",
    )
    logger.info(
        f"book_evals: {sum(map(len, docs.values()))} eval roles recorded in {path}"
    )


def setup(app: Any) -> dict[str, Any]:
    # the record a build replays ({eval-recorded} roles); "" in the instructor build
    app.add_config_value("book_evals_record", "", "env")
    app.connect("builder-inited", _builder_inited)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("build-finished", _write)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
