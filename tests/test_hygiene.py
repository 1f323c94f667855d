"""Tests that can fail and cannot flake: a static check of every file under ``tests/``.

Three rules, each reported as ``path:line: rule: detail``:

``fixed-tmp``
    No fixed temporary path. A string literal (or the literal start of an f-string)
    that is ``/tmp`` or starts with ``/tmp/`` is an offence, and so is any call of
    ``tempfile.gettempdir()`` (a fixed name joined to it is shared by every run and
    every xdist worker). Use ``tmp_path`` / ``tmp_path_factory``; ``tempfile.mkdtemp``
    and friends (unique names) stay allowed. The only exceptions are listed in
    :data:`FIXED_PATH_ALLOWED`, each with its reason; a stale entry is itself an offence.

``no-assert``
    Every test function (``test_*`` at module level, or a ``test_*`` method of a
    ``Test*`` class, in a ``test_*.py`` file) asserts something. It does when its body
    (nested functions and lambdas included) holds an *assertion*: an ``assert``
    statement; ``raise AssertionError``; ``pytest.raises`` / ``warns`` /
    ``deprecated_call`` / ``fail``; a qtbot check that fails on timeout
    (``waitUntil``, ``waitSignal``, ``waitSignals``, ``waitCallback``,
    ``assertNotEmitted``); ``qtmodeltester.check``; or any call whose name starts with
    ``assert`` (``np.testing.assert_allclose``, ``mock.assert_called_once``). It also
    does when it calls a helper that asserts, found by name, transitively: a function or
    method defined in the same file, or in a module of the tests tree that the file
    imports (``from tests.x import helper``, ``from .x import Helper``, ``import
    tests.x``). Fixtures do not count: an assertion in a fixture's teardown is not
    what the test claims. ``subprocess.run(check=True)`` does not count either: say
    what the output must be.

``wall-clock``
    No assertion on how long something took. Inside an ``assert``, an ordering
    comparison (``<``, ``<=``, ``>``, ``>=``) is an offence when one side is a
    *duration* and the other is not. A duration is a subtraction of something that is
    not a number from a clock reading, or the other way round (a clock reading is a
    call of ``time.time``, ``monotonic``, ``perf_counter``, ``process_time``,
    ``thread_time`` or their ``_ns`` forms, or a name assigned from one: ``start =
    time.monotonic()``; ``t0 - 1`` is still a reading); a name assigned from a duration
    (``took = time.monotonic() - start``); or a name, attribute or string subscript
    key, not in capitals, whose words (split on ``_``) include ``elapsed``,
    ``duration``, ``took``, ``seconds``, ``secs``, ``latency``, ``stall`` or ``ms``
    and none of ``now``, ``at``, ``stamp``, ``created``, ``updated``, ``mtime``,
    ``epoch`` (``p50_ms``, ``result["open_seconds"]``, ``done.seconds`` are durations;
    ``DAY_MS`` is a constant, ``now_ms`` a timestamp). Allowed: two durations compared with each other (``p50_ms <= p95_ms``:
    a property of the statistics); a non-negativity check (``x >= 0``, ``0 <= x``);
    set inclusion (``{"p50_ms"} <= result.keys()``); a clock reading compared with a
    timestamp (``updatedAt >= t0``: an order of events, not a time limit). Equality is
    never a time limit and is not checked.
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass
from functools import cache
from pathlib import Path

TESTS = Path(__file__).resolve().parent
TMP = "/" + "tmp"  # spelled so that this file holds no such literal itself

#: (path relative to tests/, the literal) -> why a fixed path is right there.
FIXED_PATH_ALLOWED: dict[tuple[str, str], str] = {
    ("oracle/make_openclaw_home.py", f"{TMP}/memlens-openclaw-fixture"): (
        "the regeneration script's default work folder: OpenClaw records absolute paths, "
        "so they must be the same at every regeneration; tests pass tmp_path instead"
    ),
}

CLOCK_FUNCS = frozenset(
    f"{name}{suffix}"
    for name in ("time", "monotonic", "perf_counter", "process_time", "thread_time")
    for suffix in ("", "_ns")
)
TIMING_WORDS = frozenset(
    {"elapsed", "duration", "took", "seconds", "secs", "latency", "stall", "ms"}
)
TIMESTAMP_WORDS = frozenset({"now", "at", "stamp", "created", "updated", "mtime", "epoch"})
ASSERTING_QT = frozenset(
    {"waitUntil", "waitSignal", "waitSignals", "waitCallback", "assertNotEmitted"}
)
ASSERTING_PYTEST = frozenset({"raises", "warns", "deprecated_call", "fail"})
ORDERING = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


@dataclass(frozen=True, slots=True)
class Offence:
    """One broken rule at one place."""

    path: str
    line: int
    rule: str
    detail: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.rule}: {self.detail}"


@dataclass(slots=True)
class _Module:
    path: Path
    source: str
    tree: ast.Module
    #: every function and method defined in the file, by name
    functions: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]]
    #: files of the tests tree this file imports from
    imports: list[Path]
    asserts: list[ast.Assert]
    #: the clock functions the file imports by name; None: it does not import time at all
    clocks: set[str] | None
    #: string constants, f-strings and calls: where a fixed path can hide
    path_nodes: list[ast.AST]


def _parse(path: Path) -> tuple[str, ast.Module]:
    source = path.read_text(encoding="utf-8")
    return source, ast.parse(source, filename=str(path))


@cache
def _module_file(root: Path, dotted: str) -> Path | None:
    """The file of a dotted module name if it lies in the tree at *root*."""
    base = root.parent.joinpath(*dotted.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file() and candidate.resolve().is_relative_to(root.resolve()):
            return candidate
    return None


def _imports(root: Path, path: Path, nodes: list[ast.Import | ast.ImportFrom]) -> list[Path]:
    found: list[Path] = []
    package = path.parent.relative_to(root.parent).parts
    for node in nodes:
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                up = package[: len(package) - node.level + 1]
                prefix = ".".join(up)
                base = f"{prefix}.{node.module}" if node.module else prefix
            else:
                base = node.module or ""
            names = [base] + [f"{base}.{alias.name}" for alias in node.names]
        for name in names:
            file = _module_file(root, name)
            if file is not None and file != path:
                found.append(file)
    return found


def _load(root: Path, path: Path) -> _Module:
    source, tree = _parse(path)
    functions: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}
    imports: list[ast.Import | ast.ImportFrom] = []
    asserts: list[ast.Assert] = []
    path_nodes: list[ast.AST] = []
    paths = TMP in source or "gettempdir" in source  # a cheap first look
    for node in ast.walk(tree):  # once: the slow part of the whole check
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            functions.setdefault(node.name, []).append(node)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            imports.append(node)
        elif isinstance(node, ast.Assert):
            asserts.append(node)
        elif paths and isinstance(node, ast.Constant | ast.JoinedStr | ast.Call):
            path_nodes.append(node)
    clocks: set[str] | None = None
    for node in imports:
        if isinstance(node, ast.ImportFrom) and node.module == "time":
            clocks = (clocks or set()) | {
                alias.asname or alias.name for alias in node.names if alias.name in CLOCK_FUNCS
            }
        elif isinstance(node, ast.Import) and any(a.name == "time" for a in node.names):
            clocks = clocks or set()
    return _Module(
        path,
        source,
        tree,
        functions,
        _imports(root, path, imports),
        asserts,
        clocks,
        path_nodes,
    )


def _call_name(call: ast.Call) -> tuple[str | None, str | None]:
    """(receiver name, called name) of a call, None where it is not a plain name."""
    func = call.func
    if isinstance(func, ast.Name):
        return None, func.id
    if isinstance(func, ast.Attribute):
        receiver = func.value.id if isinstance(func.value, ast.Name) else None
        return receiver, func.attr
    return None, None


def _is_assertion(node: ast.AST) -> bool:
    if isinstance(node, ast.Assert):
        return True
    if isinstance(node, ast.Raise) and node.exc is not None:
        exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
        return isinstance(exc, ast.Name) and exc.id == "AssertionError"
    if isinstance(node, ast.Call):
        receiver, name = _call_name(node)
        if name is None:
            return False
        return (
            name.startswith("assert")
            or name in ASSERTING_QT
            or (receiver == "pytest" and name in ASSERTING_PYTEST)
            or (receiver == "qtmodeltester" and name == "check")
        )
    return False


class _AssertFinder:
    """Whether a function asserts, itself or through the helpers it calls."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.modules: dict[Path, _Module] = {}
        self.memo: dict[int, bool] = {}

    def module(self, path: Path) -> _Module:
        if path not in self.modules:
            self.modules[path] = _load(self.root, path)
        return self.modules[path]

    def _helpers(self, module: _Module, name: str) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
        found = list(module.functions.get(name, ()))
        for imported in module.imports:
            found += self.module(imported).functions.get(name, ())
        return found

    def asserts(self, module: _Module, func: ast.AST) -> bool:
        key = id(func)
        if key in self.memo:
            return self.memo[key]
        self.memo[key] = False  # a recursive helper does not assert through itself
        result = False
        for node in ast.walk(func):
            if _is_assertion(node):
                result = True
                break
            if isinstance(node, ast.Call):
                _, name = _call_name(node)
                if name and any(
                    helper is not func and self.asserts(self._owner(module, helper), helper)
                    for helper in self._helpers(module, name)
                ):
                    result = True
                    break
        self.memo[key] = result
        return result

    def _owner(self, module: _Module, helper: ast.AST) -> _Module:
        if any(helper in defs for defs in module.functions.values()):
            return module
        for imported in module.imports:
            owner = self.module(imported)
            if any(helper in defs for defs in owner.functions.values()):
                return owner
        return module


def _tests_of(tree: ast.Module) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    found: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if node.name.startswith("test"):
                found.append(node)
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            found += [
                item
                for item in node.body
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
                and item.name.startswith("test")
            ]
    return found


def _literal_tmp(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        value = node.value
    elif isinstance(node, ast.JoinedStr) and node.values:
        first = node.values[0]
        if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
            return None
        value = first.value
    else:
        return None
    return value if value == TMP or value.startswith(f"{TMP}/") else None


def _check_fixed_paths(rel: str, nodes: list[ast.AST], used: set[tuple[str, str]]) -> list[Offence]:
    offences: list[Offence] = []
    in_fstring = {
        id(part) for node in nodes if isinstance(node, ast.JoinedStr) for part in node.values
    }
    for node in nodes:
        if id(node) in in_fstring:
            continue  # judged with its f-string
        literal = _literal_tmp(node)
        if literal is not None:
            if (rel, literal) in FIXED_PATH_ALLOWED:
                used.add((rel, literal))
                continue
            offences.append(
                Offence(rel, node.lineno, "fixed-tmp", f"{literal!r}: use tmp_path")  # type: ignore[attr-defined]
            )
        elif isinstance(node, ast.Call) and _call_name(node)[1] == "gettempdir":
            offences.append(
                Offence(rel, node.lineno, "fixed-tmp", "tempfile.gettempdir(): use tmp_path")
            )
    return offences


def _timing_word(name: str) -> bool:
    """A name that says it holds a duration (``p50_ms``, ``took``).

    Not a constant (``DAY_MS``) and not a timestamp (``now_ms``, ``created_at``).
    """
    words = set(name.lower().split("_"))
    return not name.isupper() and bool(words & TIMING_WORDS) and not words & TIMESTAMP_WORDS


def _is_constant(node: ast.AST) -> bool:
    """Numbers and constants in capitals only (``60 * DAY_MS``)."""
    return all(
        isinstance(sub, ast.Constant | ast.BinOp | ast.UnaryOp | ast.operator | ast.unaryop)
        or (isinstance(sub, ast.Name) and sub.id.isupper())
        or isinstance(sub, ast.Load)
        for sub in ast.walk(node)
    )


class _WallClock:
    """Asserts bounding a duration, judged with the names of the functions they sit in."""

    def __init__(self, rel: str, module: _Module) -> None:
        self.rel = rel
        self.offences: list[Offence] = []
        self.clock_names = module.clocks or set()
        self.readings: set[str] = set()  # names holding a clock reading (start = time.time())
        self.durations: set[str] = set()  # names holding a difference of readings (took)
        ordering = [a for a in module.asserts if _orders(a)]  # the only ones that can offend
        if module.clocks is None:  # the file reads no clock: only names can say "duration"
            for node in ordering:
                self.visit_Assert(node)
            return
        functions = sorted(
            (f for defs in module.functions.values() for f in defs), key=lambda f: f.lineno
        )
        self._scope(module.tree)
        outer = set(self.readings), set(self.durations)
        for node in ordering:
            self.readings, self.durations = set(outer[0]), set(outer[1])
            for function in functions:  # outermost first: a closure sees its parents' names
                if function.lineno <= node.lineno <= (function.end_lineno or 0):
                    self._scope(function)
            self.visit_Assert(node)

    def _scope(self, scope: ast.AST) -> None:
        assignments = [
            (names, value)
            for node in _walk_scope(scope)
            if (names := _targets(node)) and (value := getattr(node, "value", None)) is not None
        ]
        changed = True
        while changed:
            changed = False
            for names, value in assignments:
                into = self.durations if self._is_duration(value) else None
                if into is None and self._has_reading(value):
                    into = self.readings
                if into is not None and not set(names) <= into:
                    into.update(names)
                    changed = True

    def _is_clock_call(self, node: ast.AST) -> bool:
        if not isinstance(node, ast.Call):
            return False
        receiver, name = _call_name(node)
        if name not in CLOCK_FUNCS:
            return False
        if isinstance(node.func, ast.Attribute):
            return receiver == "time"
        return name in self.clock_names

    def _has_reading(self, node: ast.AST) -> bool:
        return any(
            self._is_clock_call(sub) or (isinstance(sub, ast.Name) and sub.id in self.readings)
            for sub in ast.walk(node)
        )

    def _is_duration(self, node: ast.AST) -> bool:
        for sub in ast.walk(node):
            if isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.Sub):
                left, right = sub.left, sub.right
                if (self._has_reading(left) and not _is_constant(right)) or (
                    self._has_reading(right) and not _is_constant(left)
                ):
                    return True  # now - start; a reading minus a number is still a reading
            elif isinstance(sub, ast.Name):
                if sub.id in self.durations or _timing_word(sub.id):
                    return True
            elif isinstance(sub, ast.Attribute):
                if _timing_word(sub.attr):
                    return True
            elif (
                isinstance(sub, ast.Subscript)
                and isinstance(sub.slice, ast.Constant)
                and isinstance(sub.slice.value, str)
                and _timing_word(sub.slice.value)
            ):
                return True
        return False

    def visit_Assert(self, node: ast.Assert) -> None:
        for compare in ast.walk(node.test):
            if isinstance(compare, ast.Compare) and self._bounds_duration(compare):
                self.offences.append(
                    Offence(
                        self.rel,
                        node.lineno,
                        "wall-clock",
                        f"{ast.unparse(compare)}: assert on behaviour, not on time",
                    )
                )
                return

    def _bounds_duration(self, compare: ast.Compare) -> bool:
        sides = [compare.left, *compare.comparators]
        for op, left, right in zip(compare.ops, sides[:-1], sides[1:], strict=True):
            if not isinstance(op, ORDERING) or _is_collection(left) or _is_collection(right):
                continue
            if self._is_duration(left) == self._is_duration(right):
                continue
            if (isinstance(op, ast.GtE) and _is_zero(right)) or (
                isinstance(op, ast.LtE) and _is_zero(left)
            ):
                continue  # non-negative: true however slow the machine
            return True
        return False


def _walk_scope(scope: ast.AST) -> list[ast.AST]:
    """The nodes of *scope*, not those of the functions defined inside it."""
    found: list[ast.AST] = []
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        found.append(node)
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            todo += ast.iter_child_nodes(node)
    return found


def _targets(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, ast.AnnAssign | ast.AugAssign | ast.NamedExpr):
        targets = [node.target]
    else:
        return []
    return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]


def _is_collection(node: ast.AST) -> bool:
    """A set-like operand: ``<=`` on it is inclusion, not an ordering of numbers."""
    if isinstance(node, ast.Set | ast.SetComp | ast.Dict | ast.DictComp):
        return True
    if isinstance(node, ast.Call):
        return _call_name(node)[1] in {"set", "frozenset", "keys", "items"}
    return False


def _orders(node: ast.Assert) -> bool:
    """Whether an assert compares with ``<``, ``<=``, ``>`` or ``>=`` anywhere."""
    return any(
        isinstance(sub, ast.Compare) and any(isinstance(op, ORDERING) for op in sub.ops)
        for sub in ast.walk(node.test)
    )


def _is_zero(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value == 0 and not isinstance(node.value, bool)


def check(root: Path) -> list[Offence]:
    """Every offence in the ``*.py`` files under *root* (a tests tree), in file order."""
    finder = _AssertFinder(root)
    offences: list[Offence] = []
    used: set[tuple[str, str]] = set()
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        module = finder.module(path)
        offences += _check_fixed_paths(rel, module.path_nodes, used)
        offences += _WallClock(rel, module).offences
        if path.name.startswith("test_"):
            offences += [
                Offence(rel, test.lineno, "no-assert", f"{test.name} asserts nothing")
                for test in _tests_of(module.tree)
                if not finder.asserts(module, test)
            ]
    if root.resolve() == TESTS:
        offences += [
            Offence(rel, 1, "fixed-tmp", f"stale FIXED_PATH_ALLOWED entry {literal!r}")
            for rel, literal in sorted(FIXED_PATH_ALLOWED.keys() - used)
        ]
    return sorted(offences, key=lambda o: (o.path, o.line, o.rule))


def test_tests_are_hygienic():
    offences = check(TESTS)
    assert not offences, "\n".join(map(str, offences))


# The checker itself, on small synthetic trees: it must be able to fail.


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "tests"
    root.mkdir()
    (root / "__init__.py").write_text("")
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def _found(root: Path) -> list[tuple[str, int, str]]:
    return [(o.path, o.line, o.rule) for o in check(root)]


def test_checker_finds_each_offence(tmp_path):
    root = _tree(
        tmp_path,
        {
            "test_bad.py": """\
                import tempfile
                import time
                from pathlib import Path

                def test_fixed_path():
                    Path("/tmp/out.png").write_text("x")
                    assert True

                def test_fixed_fstring(name="a"):
                    assert open(f"/tmp/{name}.log")

                def test_gettempdir():
                    assert Path(tempfile.gettempdir(), "memlens-x")

                def test_nothing():
                    print("ran")

                def test_calls_silent_helper():
                    helper()

                def helper():
                    return 1

                def test_timed():
                    start = time.monotonic()
                    helper()
                    took = time.monotonic() - start
                    assert took < 5

                def test_timed_inline():
                    start = time.perf_counter()
                    assert time.perf_counter() - start < 1.0 and helper() == 1

                def test_named_timing(result={"p50_ms": 1}):
                    assert result["p50_ms"] < 100

                class TestGroup:
                    def test_in_class(self):
                        self.helper()

                    def helper(self):
                        pass
                """,
        },
    )
    assert _found(root) == [
        ("test_bad.py", 6, "fixed-tmp"),
        ("test_bad.py", 10, "fixed-tmp"),
        ("test_bad.py", 13, "fixed-tmp"),
        ("test_bad.py", 15, "no-assert"),
        ("test_bad.py", 18, "no-assert"),
        ("test_bad.py", 28, "wall-clock"),
        ("test_bad.py", 32, "wall-clock"),
        ("test_bad.py", 35, "wall-clock"),
        ("test_bad.py", 38, "no-assert"),
    ]


def test_checker_passes_good_tests(tmp_path):
    root = _tree(
        tmp_path,
        {
            "helpers.py": """\
                def expect_equal(a, b):
                    assert a == b
                """,
            "sub/__init__.py": "",
            "sub/checks.py": """\
                def deep(x):
                    if x is None:
                        raise AssertionError("none")
                """,
            "sub/test_good.py": """\
                import time
                import pytest
                from tests.helpers import expect_equal
                from .checks import deep

                def test_tmp_path(tmp_path):
                    (tmp_path / "x").write_text("/tmp is a word in data, not a path here")
                    assert (tmp_path / "x").exists()

                def test_imported_helper():
                    expect_equal(1, 1)

                def test_relative_helper():
                    deep(1)

                def test_local_helper():
                    local()

                def local():
                    expect_equal(2, 2)

                def test_raises():
                    with pytest.raises(ValueError):
                        int("x")

                def test_qt(qtbot, model, qtmodeltester):
                    qtbot.waitUntil(lambda: True)
                    qtmodeltester.check(model)

                def test_numpy():
                    import numpy as np
                    np.testing.assert_array_equal([1], [1])

                def test_timing_shape(result={"p50_ms": 1, "p95_ms": 2}):
                    assert result["p50_ms"] >= 0 and 0 <= result["p95_ms"]
                    assert result["p50_ms"] <= result["p95_ms"]
                    assert result["p50_ms"] == 1

                def test_clock_order_of_events():
                    t0 = time.time()
                    stamp = time.time()
                    assert stamp >= t0 and time.monotonic() > 0 and t0 - 1 <= stamp

                class TestGroup:
                    def test_method(self):
                        self.check()

                    def check(self):
                        assert True
                """,
        },
    )
    assert _found(root) == []


def test_checker_recursion_and_fixtures_do_not_count(tmp_path):
    root = _tree(
        tmp_path,
        {
            "test_loop.py": """\
                import pytest

                @pytest.fixture
                def checked():
                    yield 1
                    assert True

                def test_uses_asserting_fixture(checked):
                    loop(checked)

                def loop(n):
                    if n:
                        loop(n - 1)
                """,
        },
    )
    assert _found(root) == [("test_loop.py", 8, "no-assert")]


def test_checker_keeps_words_apart():
    assert _timing_word("p50_ms") and _timing_word("took") and _timing_word("open_seconds")
    assert not _timing_word("sessions") and not _timing_word("timeout")
    assert not _timing_word("DAY_MS")  # a constant, not a measure
    assert not _timing_word("now_ms") and not _timing_word("created_at_ms")  # timestamps
