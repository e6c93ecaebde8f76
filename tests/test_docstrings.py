"""Every public docstring of ``lib`` parses as numpydoc, without phantom items.

numpydoc's validator (:func:`numpydoc.validate.validate`) runs over every module of
``lib`` and every public function and class it defines. The checks that fail the test:

- ``GL06``, ``GL07``: an unknown section or sections in the wrong order (numpydoc then
  reads the text under the wrong heading);
- ``PR01``, ``PR02``: a parameter of the signature that is not documented, or a
  documented parameter that does not exist (for record classes, ``NamedTuple`` and
  dataclasses, the fields are documented under Attributes instead);
- ``RT01``, ``RT03``: a function that returns something without a Returns section, or
  a return value without a description;
- and a phantom item: a Returns, Raises or Parameters entry whose name is prose (the
  closing "Used in" paragraph that numpydoc reads as one more item when it is not in
  Notes).

The style codes (summary wording, See Also and Examples everywhere, ...) are not
checked. ``lib.teaching.labs`` is left out: it is maintained with the student edition.
"""

from __future__ import annotations

import importlib
import inspect

import pytest

numpydoc_validate = pytest.importorskip("numpydoc.validate")
docscrape = pytest.importorskip("numpydoc.docscrape")

MODULES = (
    "lib", "lib._checks", "lib.teaching._lab_names", "lib._limits", "lib._ridge_solvers", "lib.quadrature", "lib.hermite", "lib.teachers",
    "lib.samplers", "lib.attention",
    "lib.simulation", "lib.baselines", "lib.bayes", "lib.spectral", "lib.theory", "lib.theory.marchenko_pastur",
    "lib.theory.linear", "lib.theory.nonlinear", "lib.theory.kappa_inf", "lib.theory.gap",
    "lib.theory.spectral_limits", "lib.finite_size", "lib.finite_size.data", "lib.finite_size.fits", "lib.finite_size.study",
    "lib.training_runs", "lib.loss_curves",
    "lib.teaching.claims", "lib.teaching.tables", "lib.teaching.benchmarks", "lib.teaching.plotting", "lib.teaching.widgets",
)  # fmt: skip
CHECKED = {"GL06", "GL07", "PR01", "PR02", "RT01", "RT03"}


def _public_objects() -> list[str]:
    names = []
    for modname in MODULES:
        module = importlib.import_module(modname)
        names.append(modname)
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name, None)
            if (inspect.isfunction(obj) or inspect.isclass(obj)) and obj.__module__ == modname:
                names.append(f"{modname}.{name}")
    return names


OBJECTS = _public_objects()


def _is_record(obj: object) -> bool:
    """A NamedTuple or dataclass: its fields are documented as Attributes."""
    return inspect.isclass(obj) and (hasattr(obj, "_fields") or hasattr(obj, "__dataclass_fields__"))


def _resolve(qualname: str) -> object:
    modname, _, attr = qualname.rpartition(".")
    try:
        return importlib.import_module(qualname)
    except ModuleNotFoundError:
        return getattr(importlib.import_module(modname), attr)


def test_there_are_public_objects():
    assert len(OBJECTS) > 100


@pytest.mark.parametrize("qualname", OBJECTS)
def test_numpydoc_validation(qualname):
    obj = _resolve(qualname)
    if inspect.ismodule(obj) and not any(
        line.lstrip().startswith(("def ", "class ")) for line in inspect.getsource(obj).splitlines()
    ):
        # numpydoc 1.x cannot locate a module without any def or class (StopIteration in
        # Validator.source_file_def_line); such a module (a package's __init__ of
        # re-exports) has only its docstring, which Sphinx builds under -W.
        pytest.skip("numpydoc cannot validate a module without a def or class")
    errors = [
        (code, msg)
        for code, msg in numpydoc_validate.validate(qualname)["errors"]
        if code in CHECKED and not (code == "PR01" and _is_record(obj))
    ]
    assert not errors, f"{qualname}: " + "; ".join(f"{c} {m}" for c, m in errors)


@pytest.mark.parametrize(
    "qualname", [q for q in OBJECTS if inspect.isroutine(_resolve(q)) or inspect.isclass(_resolve(q))]
)
def test_no_phantom_items(qualname):
    obj = _resolve(qualname)
    doc = docscrape.ClassDoc(obj) if inspect.isclass(obj) else docscrape.FunctionDoc(obj)
    for section in ("Parameters", "Returns", "Yields", "Raises", "Attributes"):
        for item in doc[section]:
            text = f"{item.name} {item.type}"
            assert "Used in" not in text and ":doc:" not in text and "Through other" not in text, (
                f"{qualname}: the {section} section has an item that is prose: {text[:80]!r} "
                "(move the paragraph to a Notes section)"
            )
