"""Resolve cross-references to names that ``lib``'s packages re-export.

``lib.theory`` and ``lib.finite_size`` are packages whose ``__init__`` re-exports the
public names of their modules, so a chapter writes ``lib.theory.icl_error`` while the
API reference documents the function where it is defined,
``lib.theory.linear.icl_error``.
A docstring may also name a function of a sibling module by its short name. When Sphinx
cannot resolve such a Python reference, this extension looks for the one documented
``lib`` object with that last name (of the role's kind, inside the package the
reference names) and links to it; anything else stays unresolved and fails the strict
build as before.
"""

from __future__ import annotations

from typing import Any

from sphinx.util.nodes import make_refnode

_KINDS = {
    "func": {"function", "method"},
    "meth": {"method", "function"},
    "class": {"class", "exception"},
    "exc": {"exception", "class"},
    "data": {"data", "attribute"},
    "attr": {"attribute", "data", "property"},
    "mod": {"module"},
    "obj": None,
}


def _resolve(app: Any, env: Any, node: Any, contnode: Any) -> Any:
    if node.get("refdomain") != "py":
        return None
    target = node.get("reftarget", "").lstrip("~.")
    kinds = _KINDS.get(node.get("reftype"), set())
    if not target or kinds == set():
        return None
    domain = env.get_domain("py")
    last = target.rsplit(".", 1)[-1]
    scope = (
        target.rsplit(".", 1)[0] + "."
        if target.startswith("lib.") and "." in target
        else "lib."
    )
    found = [
        (name, obj)
        for name, obj in domain.objects.items()
        if name.startswith(scope)
        and name.rsplit(".", 1)[-1] == last
        and (kinds is None or obj.objtype in kinds)
        and not obj.aliased
    ]
    if len(found) != 1:
        return None
    name, obj = found[0]
    return make_refnode(
        app.builder, node["refdoc"], obj.docname, obj.node_id, contnode, name
    )


def setup(app: Any) -> dict[str, Any]:
    app.connect("missing-reference", _resolve)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
