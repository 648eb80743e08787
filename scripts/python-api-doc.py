#!/usr/bin/env python3
"""Writes docs/python-api.md, the API reference of the `flotilla` Python
package, from its docstrings and signatures (the installed package: run
./scripts/install-python-package.sh first). With --check, writes nothing
and fails when the file differs from what the docstrings say, so that the
reference cannot fall behind the code (the test command runs it)."""

from __future__ import annotations

import argparse
import importlib
import inspect
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "docs" / "python-api.md"

# The public modules, in reading order; `flotilla.gym` needs the `gym` extra.
MODULES = ["flotilla", "flotilla.sim", "flotilla.lockstep", "flotilla.claims", "flotilla.launch", "flotilla.gym"]
ERRORS_MODULE = "flotilla.errors"

HEADER = """# Python API reference

Generated from the docstrings of the `flotilla` package by
[`scripts/python-api-doc.py`](../scripts/python-api-doc.py) (the test command
checks that it is current). [Using Flotilla from Python](python.md) is the
guide; this is every public class, method and function.
"""


def clean(doc: str | None) -> str:
    return inspect.cleandoc(doc) if doc else "(undocumented)"


class _Written:
    """An annotation as written in the source, shown without quotes."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def signature(obj: Any) -> str:
    """`obj`'s signature with its annotations as written (the modules
    postpone them), so that the reference does not depend on where other
    packages define their types."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return "(...)"

    def written(annotation: Any) -> Any:
        return _Written(annotation) if isinstance(annotation, str) else annotation

    parameters = [p.replace(annotation=written(p.annotation)) for p in sig.parameters.values()]
    return str(sig.replace(parameters=parameters, return_annotation=written(sig.return_annotation)))


def own_members(cls: type) -> list[tuple[str, Any]]:
    """Public methods and properties defined by `cls` itself, in source order."""
    found = []
    for name, value in cls.__dict__.items():
        if name.startswith("_") and name != "__init__":
            continue
        if isinstance(value, property) or inspect.isfunction(value) or isinstance(value, (staticmethod, classmethod)):
            found.append((name, value))
    return found


def document_class(cls: type, out: list[str]) -> None:
    init = cls.__dict__.get("__init__")
    sig = signature(init).replace("(self, ", "(").replace("(self)", "()").removesuffix(" -> None") if init else ""
    out.append(f"### class `{cls.__name__}{sig}`\n")
    bases = [b.__name__ for b in cls.__bases__ if b is not object]
    if bases:
        out.append(f"Based on {', '.join(f'`{b}`' for b in bases)}.\n")
    out.append(clean(cls.__doc__) + "\n")
    for name, value in own_members(cls):
        if name == "__init__":
            continue
        if isinstance(value, property):
            text = clean(value.__doc__).replace("\n", "\n  ")
            out.append(f"- **`{name}`** (property): {text}\n")
            continue
        function = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
        sig = signature(function).replace("(self, ", "(").replace("(self)", "()")
        text = clean(function.__doc__).replace("\n", "\n  ")
        out.append(f"- **`{name}{sig}`**: {text}\n")


def defined_here(module: ModuleType, obj: Any) -> bool:
    return getattr(obj, "__module__", None) == module.__name__


def document_module(module: ModuleType, out: list[str]) -> None:
    out.append(f"## `{module.__name__}`\n")
    out.append(clean(module.__doc__) + "\n")
    for name, obj in vars(module).items():
        if name.startswith("_") or not defined_here(module, obj):
            continue
        if inspect.isclass(obj):
            document_class(obj, out)
        elif inspect.isfunction(obj):
            text = clean(obj.__doc__)
            out.append(f"### `{name}{signature(obj)}`\n\n{text}\n")


def document_errors(out: list[str]) -> None:
    module = importlib.import_module(ERRORS_MODULE)
    out.append(f"## `{module.__name__}`\n")
    out.append(clean(module.__doc__) + "\n")
    for name, obj in vars(module).items():
        if inspect.isclass(obj) and defined_here(module, obj):
            base = obj.__bases__[0].__name__
            out.append(f"- **`{name}`** (subclass of `{base}`): {clean(obj.__doc__)}\n")


def document_native(out: list[str]) -> None:
    native = importlib.import_module("flotilla._native")
    out.append("## `flotilla._native`\n")
    out.append(
        "The Rust side (PyO3): codecs, keys and protocols of Flotilla's crates. "
        "The modules above wrap it; its functions are public for tools that need "
        "the bytes.\n"
    )
    for name in sorted(dir(native)):
        obj = getattr(native, name)
        if name.startswith("_") or not callable(obj):
            continue
        text = clean(obj.__doc__).replace("\n", "\n  ")
        kind = "class" if inspect.isclass(obj) else "function"
        out.append(f"- **`{name}{getattr(obj, '__text_signature__', None) or ''}`** ({kind}): {text}\n")


def reference() -> str:
    out = [HEADER]
    for name in MODULES:
        document_module(importlib.import_module(name), out)
    document_errors(out)
    document_native(out)
    return "\n".join(out).rstrip() + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail if docs/python-api.md is not current")
    args = parser.parse_args()
    text = reference()
    if args.check:
        if not OUTPUT.exists() or OUTPUT.read_text() != text:
            sys.exit(
                f"{OUTPUT.relative_to(ROOT)} is not what the docstrings say: "
                "run ./scripts/python-api-doc.py and commit the result"
            )
        return
    OUTPUT.write_text(text)
    print(f"wrote {OUTPUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
