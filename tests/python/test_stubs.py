"""The type stubs (python/sessiondb/_sessiondb.pyi) say what the extension
takes: every function and method the stubs name exists, with the same
arguments in the same order, and every one the extension has is named."""

import ast
import inspect
import os

import pytest

import sessiondb
from sessiondb import _sessiondb

STUBS = os.path.join(os.path.dirname(sessiondb.__file__), "_sessiondb.pyi")


def _split_top(text):
    """`text` split at the commas outside brackets."""
    parts, depth, current = [], 0, ""
    for ch in text:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    if current.strip():
        parts.append(current)
    return [p.strip() for p in parts]


def _runtime_args(obj, name):
    """The argument names of a pybind11 function from its signature line
    ("name(self: ..., a: int, *, b: str = '') -> ..."), "*" for keyword-only."""
    doc = (obj.__doc__ or "").lstrip()
    head = doc.split("\n", 1)[0]
    assert head.startswith(name + "("), f"{name}: no signature in {head!r}"
    depth, end = 0, None
    for i, ch in enumerate(head[len(name):], start=len(name)):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0:
            end = i
            break
    args = _split_top(head[len(name) + 1:end])
    return [a.split(":", 1)[0].split("=", 1)[0].strip() for a in args]


def _stub_args(fn):
    a = fn.args
    names = [x.arg for x in a.posonlyargs + a.args]
    if a.vararg:
        names.append("*" + a.vararg.arg)
    elif a.kwonlyargs:
        names.append("*")
    names += [x.arg for x in a.kwonlyargs]
    if a.kwarg:
        names.append("**" + a.kwarg.arg)
    return names


def _stubbed():
    tree = ast.parse(open(STUBS, encoding="utf-8").read())
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            yield node.name, None, node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and not any(
                        isinstance(d, ast.Name) and d.id in ("property", "staticmethod")
                        or isinstance(d, ast.Attribute) for d in item.decorator_list):
                    yield item.name, node.name, item


CASES = list(_stubbed())


@pytest.mark.parametrize("name, owner, fn", CASES,
                         ids=[f"{o}.{n}" if o else n for n, o, _ in CASES])
def test_each_stub_names_the_arguments_the_extension_takes(name, owner, fn):
    target = getattr(_sessiondb, owner) if owner else _sessiondb
    assert hasattr(target, name), f"the stubs name {owner}.{name}, which the extension lacks"
    obj = getattr(target, name)
    if name == "__init__":
        assert _runtime_args(obj, name) == _stub_args(fn)
        return
    assert _runtime_args(obj, name) == _stub_args(fn), f"{owner}.{name}"


def test_every_public_function_and_method_of_the_extension_has_a_stub():
    stubbed = {(o, n) for n, o, _ in CASES}
    missing = []
    for name, value in vars(_sessiondb).items():
        if name.startswith("_"):
            continue
        if inspect.isbuiltin(value) or type(value).__name__ == "builtin_function_or_method":
            if (None, name) not in stubbed:
                missing.append(name)
        elif inspect.isclass(value) and not issubclass(value, BaseException):
            for attr, member in vars(value).items():
                if attr.startswith("_") and attr != "__init__":
                    continue
                if type(member).__name__ == "instancemethod" and (name, attr) not in stubbed:
                    missing.append(f"{name}.{attr}")
    assert missing == []
