"""The layout shows the architecture (issue 16, item 6); each failure names its offenders.

Every ``*.py`` under ``core/``, ``app/`` and ``widgets/`` (the production layers) is
parsed once, and the checks read that one parse:

1. no module is over :data:`MAX_LINES` lines;
2. no public (no leading ``_``) top-level class or function name is defined in two
   modules: a reader who meets ``describe`` knows which one it is;
3. no production function or method is called by tests only. A name counts as used
   by production when it appears as a name, an attribute, or a word of a string
   (``invokeMethod(obj, "name")``, a Slot connected by name) in the production
   layers, in ``bench/``, ``docs/`` or ``packaging/`` (their Python code, their
   scripts, the code spans of their Markdown), or in ``pyproject.toml``'s entry
   points. Docstrings and ``__all__`` lists do not count: saying a name is not using
   it. Skipped: dunder methods, property setters and deleters, and any name a class
   of PySide6's QtCore, QtGui or QtWidgets has (the Qt virtuals a class overrides are
   called by Qt, never by name);
4. every package (every folder holding Python) has an ``__init__.py`` whose
   docstring says in a sentence or more what lives there;
5. one BM25 engine: BM25's term-frequency saturation parameter ``k1`` (a name, an
   argument, an attribute or a keyword spelled ``k1``/``K1``) occurs in
   :data:`BM25_MODULE` only (and the modules of :data:`K1_ALLOWED`, with the reason),
   and no other module defines a class or function whose name holds ``bm25`` (except
   those in :data:`BM25_NAMES_ALLOWED`, with the reason);
6. ``lint-imports`` passes: core is pure Python, the layers app > widgets > core, and
   no import circle in app or widgets (the contracts are in ``pyproject.toml``).
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ("core", "app", "widgets")
OTHER_USERS = ("bench", "docs", "packaging")
"""Folders whose use of a production name counts as production use."""
MAX_LINES = 600
MIN_PACKAGE_DOC = 40
"""Characters a package docstring needs: one real sentence, not a placeholder."""
BM25_MODULE = "core/recall/bm25.py"
BM25_NAMES_ALLOWED = {
    ("core/openclaw/memsearch_text.py", "bm25_rank_to_score"): (
        "maps the rank SQLite FTS5's own bm25() gave to OpenClaw's score; it scores nothing"
    ),
}
K1_ALLOWED = {
    "core/openclaw/memsearch_postings.py": (
        "reproduces SQLite FTS5's own bm25() (fts5Bm25Function) to the bit, and checks itself"
        " against SQLite when built: FTS5's engine, which OpenClaw's search ranks by, not a"
        " second memlens one"
    ),
}
WORD = re.compile(r"[A-Za-z_]\w*")
CODE_SPAN = re.compile(r"```.*?```|`[^`\n]+`", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Definition:
    """A function, method or class defined in a production module."""

    name: str
    path: str
    line: int
    top_level: bool
    is_class: bool
    accessor: bool  # a property setter or deleter: it shares the property's name

    def __str__(self) -> str:
        return f"{self.path}:{self.line} {self.name}"


@dataclass(slots=True)
class Module:
    """What the checks need of one production module, from one parse."""

    path: str
    lines: int
    docstring: str | None
    definitions: list[Definition] = field(default_factory=list)
    references: Counter[str] = field(default_factory=Counter)
    k1_lines: list[int] = field(default_factory=list)


def _silent_strings(node: ast.AST, silent: set[int]) -> None:
    """Mark the docstring of *node* and the names of an ``__all__`` it assigns."""
    if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
        body = node.body
        if (
            body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            silent.add(id(body[0].value))
    elif isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign) and node.value:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            silent.update(id(sub) for sub in ast.walk(node.value))


def _scan(rel: str, tree: ast.Module, counter: Counter[str]) -> tuple[list[Definition], list[int]]:
    """One walk of *tree*: its definitions, the names it uses (into *counter*), its ``k1`` lines.

    ``ast.walk`` visits a parent before its children, so a docstring is known to be
    one before it is reached.
    """
    top = {id(node) for node in tree.body}
    silent: set[int] = set()
    definitions: list[Definition] = []
    k1: list[int] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            counter[node.id] += 1
            if node.id.lower() == "k1":
                k1.append(node.lineno)
        elif isinstance(node, ast.Attribute):
            counter[node.attr] += 1
            if node.attr.lower() == "k1":
                k1.append(node.lineno)
        elif isinstance(node, ast.Constant):
            if isinstance(node.value, str) and id(node) not in silent:
                counter.update(WORD.findall(node.value))
        elif isinstance(node, ast.arg):
            if node.arg.lower() == "k1":
                k1.append(node.lineno)
        elif isinstance(node, ast.keyword):
            if node.arg and node.arg.lower() == "k1":
                k1.append(node.value.lineno)
        else:
            _silent_strings(node, silent)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                accessor = any(
                    isinstance(d, ast.Attribute) and d.attr in ("setter", "deleter")
                    for d in node.decorator_list
                )
                definitions.append(
                    Definition(
                        node.name,
                        rel,
                        node.lineno,
                        id(node) in top,
                        isinstance(node, ast.ClassDef),
                        accessor,
                    )
                )
    return definitions, sorted(k1)


@cache
def production(root: Path = ROOT) -> dict[str, Module]:
    """Every module of the production layers, parsed once, by path relative to the repo."""
    modules: dict[str, Module] = {}
    for layer in LAYERS:
        for path in sorted((root / layer).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            source = path.read_text(encoding="utf-8")
            tree = ast.parse(source, filename=rel)
            module = Module(rel, source.count("\n") + 1, ast.get_docstring(tree))
            module.definitions, module.k1_lines = _scan(rel, tree, module.references)
            modules[rel] = module
    return modules


@cache
def production_references(root: Path = ROOT) -> Counter[str]:
    """Every name production uses: the layers, bench/docs/packaging, the entry points."""
    counter: Counter[str] = Counter()
    for module in production(root).values():
        counter.update(module.references)
    for folder in OTHER_USERS:
        for path in sorted((root / folder).rglob("*")):
            if not path.is_file():
                continue
            if path.suffix == ".py":
                _scan(path.name, ast.parse(path.read_bytes(), filename=str(path)), counter)
            elif path.suffix == ".md":
                for span in CODE_SPAN.findall(path.read_text(encoding="utf-8")):
                    counter.update(WORD.findall(span))
            elif path.suffix in {".sh", ".spec", ".toml", ".txt", ".cfg", ".ini"}:
                counter.update(WORD.findall(path.read_text(encoding="utf-8")))
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    for group in ("scripts", "gui-scripts"):
        for target in project.get(group, {}).values():
            counter.update(WORD.findall(target))
    for entries in project.get("entry-points", {}).values():
        for target in entries.values():
            counter.update(WORD.findall(target))
    return counter


@cache
def words_in_tests(root: Path = ROOT) -> Counter[str]:
    """Every identifier-like word in the tests (text, not AST: a mention is enough)."""
    counter: Counter[str] = Counter()
    for path in (root / "tests").rglob("*.py"):
        counter.update(WORD.findall(path.read_text(encoding="utf-8")))
    return counter


@cache
def qt_names() -> frozenset[str]:
    """Every attribute of every class of QtCore, QtGui and QtWidgets."""
    from PySide6 import QtCore, QtGui, QtWidgets

    names: set[str] = set()
    for qt in (QtCore, QtGui, QtWidgets):
        for name in dir(qt):
            obj = getattr(qt, name)
            if isinstance(obj, type):
                names.update(dir(obj))
    return frozenset(names)


def _listing(lines: list[str]) -> str:
    return "\n".join(lines)


# -- the checks ----------------------------------------------------------------------------------


def oversized_modules(root: Path = ROOT) -> list[str]:
    modules = production(root).values()
    return [f"{m.path}: {m.lines} lines" for m in modules if m.lines > MAX_LINES]


def duplicate_names(root: Path = ROOT) -> list[str]:
    where: dict[str, list[Definition]] = {}
    for module in production(root).values():
        for d in module.definitions:
            if d.top_level and not d.name.startswith("_"):
                where.setdefault(d.name, []).append(d)
    return [
        f"{name}: " + ", ".join(f"{d.path}:{d.line}" for d in defs)
        for name, defs in sorted(where.items())
        if len({d.path for d in defs}) > 1
    ]


def functions_only_tests_call(root: Path = ROOT) -> list[str]:
    used, tests, qt = production_references(root), words_in_tests(root), qt_names()
    return [
        str(d)
        for module in production(root).values()
        for d in module.definitions
        if not d.is_class
        and not d.accessor
        and not (d.name.startswith("__") and d.name.endswith("__"))
        and d.name not in qt
        and used[d.name] == 0
        and tests[d.name] > 0
    ]


def packages_without_docstring(root: Path = ROOT) -> list[str]:
    offenders: list[str] = []
    folders = {path.parent for layer in LAYERS for path in (root / layer).rglob("*.py")} | {
        root / layer for layer in LAYERS
    }
    for folder in sorted(folders):
        rel = (folder / "__init__.py").relative_to(root).as_posix()
        module = production(root).get(rel)
        if module is None:
            offenders.append(f"{rel}: missing (a folder of Python is a package here)")
        elif len((module.docstring or "").strip()) < MIN_PACKAGE_DOC:
            offenders.append(f"{rel}: no docstring saying what lives in the package")
    return offenders


def second_bm25_engines(root: Path = ROOT) -> list[str]:
    offenders: list[str] = []
    for module in production(root).values():
        if module.path == BM25_MODULE:
            continue
        if module.path not in K1_ALLOWED:
            offenders += [f"{module.path}:{line} uses BM25's k1" for line in module.k1_lines]
        offenders += [
            f"{d}: a BM25 name outside {BM25_MODULE}"
            for d in module.definitions
            if "bm25" in d.name.lower() and (d.path, d.name) not in BM25_NAMES_ALLOWED
        ]
    return offenders


def test_no_module_over_the_line_ceiling():
    assert not oversized_modules(), _listing(oversized_modules())


def test_no_public_name_defined_twice():
    assert not duplicate_names(), _listing(duplicate_names())


def test_no_production_function_only_tests_call():
    found = functions_only_tests_call()
    assert not found, "called by tests only:\n" + _listing(found)


def test_every_package_says_what_lives_in_it():
    assert not packages_without_docstring(), _listing(packages_without_docstring())


def test_one_bm25_engine():
    assert BM25_MODULE in production(ROOT) and production(ROOT)[BM25_MODULE].k1_lines
    assert not second_bm25_engines(), _listing(second_bm25_engines())
    for path, name in BM25_NAMES_ALLOWED:  # an exception that is gone is taken out
        assert any(d.name == name for d in production(ROOT)[path].definitions), (path, name)


def test_import_contracts_hold():
    lint = Path(sys.executable).parent / "lint-imports"
    done = subprocess.run(
        [str(lint) if lint.exists() else "lint-imports"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    broken = [line for line in done.stdout.splitlines() if "BROKEN" in line or "->" in line]
    assert done.returncode == 0, _listing(broken) or done.stdout[-4000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


# -- the checks can fail -------------------------------------------------------------------------


def test_the_scan_sees_definitions_references_and_k1():
    tree = ast.parse(
        '"""Doc naming hidden_one."""\n'
        '__all__ = ["exported_one"]\n'
        "def used(k1=1.2):\n"
        "    return obj.method_a() + helper(x)\n"
        "class Thing:\n"
        "    @property\n"
        "    def size(self): return 1\n"
        "    @size.setter\n"
        "    def size(self, v): pass\n"
        'invoke(obj, "slot_by_name")\n'
    )
    counter: Counter[str] = Counter()
    definitions, k1 = _scan("m.py", tree, counter)
    assert k1 == [3]
    assert counter["method_a"] == counter["helper"] == counter["slot_by_name"] == 1
    assert counter["hidden_one"] == counter["exported_one"] == 0  # saying is not using
    defs = {(d.name, d.top_level, d.is_class, d.accessor) for d in definitions}
    assert defs == {
        ("used", True, False, False),
        ("Thing", True, True, False),
        ("size", False, False, False),
        ("size", False, False, True),
    }


def test_each_check_names_its_offenders(tmp_path):
    def write(rel: str, text: str) -> None:
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    write("pyproject.toml", '[project]\nname = "x"\n[project.scripts]\nx = "app.main:run"\n')
    write("core/__init__.py", '"""The pure Python layer: formats, search, safety."""\n')
    write("core/recall/__init__.py", "")
    write("core/recall/bm25.py", "K1 = 1.2\n")
    write("core/other.py", "def score(tf, k1=1.5):\n    return tf * (k1 + 1)\n")
    write("core/big.py", "x = 1\n" * MAX_LINES + "def describe():\n    pass\n")
    write("app/__init__.py", '"""The application: the window, its actions, the settings."""\n')
    write("app/main.py", "def run():\n    used_by_app()\n\ndef used_by_app():\n    pass\n")
    write("widgets/__init__.py", '"""Qt views and item models over core objects."""\n')
    write(
        "widgets/view.py",
        "def describe():\n    pass\n\nclass View:\n"
        "    def only_for_tests(self):\n        pass\n\n"
        "    def setText(self, text):\n        pass\n",
    )
    write("tests/test_view.py", "def test_it():\n    View().only_for_tests()\n    used_by_app()\n")
    assert oversized_modules(tmp_path) == [f"core/big.py: {MAX_LINES + 3} lines"]
    assert duplicate_names(tmp_path) == [
        f"describe: core/big.py:{MAX_LINES + 1}, widgets/view.py:1"
    ]
    assert functions_only_tests_call(tmp_path) == ["widgets/view.py:5 only_for_tests"]
    assert packages_without_docstring(tmp_path) == [
        "core/recall/__init__.py: no docstring saying what lives in the package"
    ]
    assert second_bm25_engines(tmp_path) == [
        "core/other.py:1 uses BM25's k1",
        "core/other.py:2 uses BM25's k1",
    ]


def test_architecture_md_names_files_that_exist():
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`([\w./*-]+/[\w.*-]+\.(?:py|md))`", text)) - {
        p for p in re.findall(r"`([\w./*-]+)`", text) if p.startswith("../")
    }
    assert len(named) > 10
    missing = sorted(p for p in named if not any(ROOT.glob(p)))
    assert not missing, missing
