"""Code and tool output for the demo: code blocks, files, snippets, test and grep output.

Everything is drawn from a ``random.Random`` passed in and a :class:`~core.demo.projects.Project`,
so the demo is reproducible.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import random

    from core.demo.projects import Project


_VARS = (
    "total",
    "items",
    "entry",
    "key",
    "cursor",
    "batch",
    "rate",
    "amount",
    "limit",
    "offset",
    "payload",
    "retries",
    "deadline",
    "buf",
    "row",
    "series",
    "result",
)
_FIELDS = ("id", "count", "size", "created_at", "updated_at", "status", "name", "value")
_WORDS = (
    "cache",
    "budget",
    "request",
    "invoice",
    "event",
    "window",
    "series",
    "tile",
    "attempt",
    "session",
    "record",
    "config",
)


def pick(rng: random.Random, seq: tuple[str, ...]) -> str:
    """One item of *seq*, drawn from *rng* (``choice`` draws as ``randrange(len(seq))``)."""
    return rng.choice(seq)


def ident(name: str) -> str:
    """A function name as it appears in code (``Type::method`` -> ``method``)."""
    return name.split("::")[-1].split(".")[-1]


_BLOCKS = {
    "py": (
        "def {fn}({a}: {T}, {b}: int = {n}) -> {T}:\n"
        '    """Return the {w} for {a} (see {w2})."""\n'
        '    if {a} is None:\n        raise ValueError("{fn}: {a} is required")\n'
        "    {v} = {a}.{f}\n    for {v2} in range({b}):\n        {v} += {v2}\n"
        '    logger.debug("{fn} %s -> %s", {a}, {v})\n    return {v}\n',
        "class {C}({B}):\n    {f}: {T}\n    {f2}: int = {n}\n\n"
        "    def {fn}(self) -> bool:\n        return self.{f2} > {n}\n",
    ),
    "rs": (
        "pub fn {fn}(&mut self, {a}: {T}) -> Result<{T}, Error> {{\n"
        "    let {v} = self.{f}.get(&{a}).copied().unwrap_or_default();\n"
        "    if {v} > {n} {{\n        return Err(Error::{C}({a}));\n    }}\n"
        "    self.{f2} += {v};\n    Ok({v})\n}}\n",
        "#[derive(Debug, Clone, PartialEq)]\npub struct {C} {{\n    pub {f}: {T},\n"
        "    pub {f2}: usize,\n}}\n\nimpl {C} {{\n    pub fn {fn}(&self) -> usize {{\n"
        "        self.{f2}.saturating_sub({n})\n    }}\n}}\n",
    ),
    "ts": (
        "export function {fn}({a}: {T}, {b} = {n}): {T} {{\n"
        "  if (!{a}) {{\n    throw new Error(`{fn}: missing {a}`);\n  }}\n"
        "  const {v} = {a}.{f} ?? {b};\n  return {{ ...{a}, {f2}: {v} }};\n}}\n",
        "export interface {C} {{\n  {f}: {T};\n  {f2}?: number;\n}}\n\n"
        "export const {fn} = ({a}: {C}): number => {a}.{f2} ?? {n};\n",
    ),
    "go": (
        "func (c *{C}) {fn}(ctx context.Context, {a} {T}) error {{\n"
        '\tif {a} == nil {{\n\t\treturn fmt.Errorf("{fn}: nil {a}")\n\t}}\n'
        "\t{v} := c.{F}\n\tfor i := 0; i < {n}; i++ {{\n\t\tif err := ctx.Err(); err != nil "
        "{{\n\t\t\treturn err\n\t\t}}\n\t\t{v} += i\n\t}}\n\tc.{F2} = {v}\n\treturn nil\n}}\n",
        "type {C} struct {{\n\t{F} {T}\n\t{F2} int\n}}\n",
    ),
}
_HEADERS = {
    "py": "from __future__ import annotations\n\nimport logging\nfrom decimal import Decimal\n\n"
    "logger = logging.getLogger(__name__)\n",
    "rs": "use std::collections::{HashMap, VecDeque};\n\nuse crate::error::Error;\n",
    "ts": "import { ApiError } from '../api/errors';\nimport type { Session } from '../types';\n",
    "go": 'package queue\n\nimport (\n\t"context"\n\t"fmt"\n\t"time"\n)\n',
}
_TYPES = {
    "py": ("Decimal", "Invoice", "dict[str, int]"),
    "rs": ("u64", "TileKey", "usize"),
    "ts": ("Session", "SeriesPoint", "number"),
    "go": ("*Event", "*Batch", "Config"),
}
_COMMENT = {"py": "# ", "rs": "// ", "ts": "// ", "go": "// "}


@functools.cache
def _camel(name: str) -> str:
    return "".join(w.capitalize() for w in name.split("_"))


def code_block(rng: random.Random, project: Project) -> str:
    """One function or type definition in the project's language."""
    lang = project.lang
    a, b = rng.sample(_VARS, 2)
    f, f2 = rng.sample(_FIELDS, 2)
    if lang == "ts":
        f, f2 = (x[0] + _camel(x)[1:] for x in (f, f2))
    if rng.random() < 0.5:
        fn = ident(pick(rng, project.functions))
    elif lang in ("py", "rs"):
        fn = f"{pick(rng, _WORDS)}_{pick(rng, _VARS)}"
    else:
        fn = pick(rng, _WORDS) + _camel(pick(rng, _VARS))
    text = pick(rng, _BLOCKS[lang]).format(
        fn=fn,
        a=a,
        b=b,
        v=pick(rng, ("acc", "out", "seen", "sum", "next")),
        v2="i",
        T=pick(rng, _TYPES[lang]),
        n=rng.randint(2, 512),
        f=f,
        f2=f2,
        F=_camel(f),
        F2=_camel(f2),
        C=_camel(pick(rng, _WORDS)) + _camel(pick(rng, _WORDS)),
        B="BaseModel",
        w=pick(rng, _WORDS),
        w2=pick(rng, _WORDS),
    )
    if rng.random() < 0.3:
        text = f"{_COMMENT[lang]}{pick(rng, project.decisions)}.\n{text}"
    return text


def code_file(rng: random.Random, project: Project, chars: int) -> str:
    """A source file of about *chars* characters."""
    parts = [_HEADERS[project.lang]]
    size = len(parts[0])
    while size < chars:
        block = code_block(rng, project)
        parts.append(block)
        size += len(block) + 1
    return "\n".join(parts)


def snippet(rng: random.Random, project: Project) -> tuple[str, str]:
    """An ``(oldText, newText)`` pair for an edit."""
    old = code_block(rng, project)
    lines = old.splitlines()
    i = rng.randrange(len(lines))
    changed = f"{_COMMENT[project.lang]}{pick(rng, project.decisions)}"
    new_lines = [*lines[:i], changed, *lines[i:]]
    if rng.random() < 0.5 and len(lines) > 3:
        new_lines[-2] = new_lines[-2].replace(lines[-2].strip(), lines[-2].strip() + "  ")
    return old, "\n".join(new_lines) + "\n"


def test_output(rng: random.Random, project: Project, failure: tuple[str, str] | None) -> str:
    """What the project's test command prints (passing when *failure* is None)."""
    n = rng.randint(18, 140)
    lang = project.lang
    if lang == "py":
        head = "." * min(n - 1, 60) + ("F" if failure else ".") + " [100%]"
        if failure:
            return (
                f"{head}\n=================================== FAILURES ====================="
                f"==============\n_____ {failure[0].split('::')[-1]} _____\n\n{failure[1]}\n"
                f"=========================== short test summary info ===================="
                f"=======\nFAILED {failure[0]}\n1 failed, {n - 1} passed in "
                f"{rng.uniform(0.8, 4):.2f}s"
            )
        return f"{head}\n{n} passed in {rng.uniform(0.8, 4):.2f}s"
    if lang == "rs":
        ok = "FAILED" if failure else "ok"
        body = f"\nfailures:\n\n---- {failure[0]} stdout ----\n{failure[1]}\n" if failure else ""
        return (
            f"   Compiling tilecache v0.4.2 (/home/dev/projects/tilecache)\n    Finished `test`"
            f" profile [unoptimized + debuginfo] target(s) in {rng.uniform(2, 30):.2f}s\n"
            f"     Running unittests src/lib.rs\n\nrunning {n} tests\n{body}\n"
            f"test result: {ok}. {n - (1 if failure else 0)} passed; "
            f"{1 if failure else 0} failed; 0 ignored; finished in {rng.uniform(0.1, 3):.2f}s"
        )
    if lang == "ts":
        if failure:
            return (
                f" FAIL  {failure[0]}\n{failure[1]}\n\n Test Files  1 failed | 4 passed (5)\n"
                f"      Tests  1 failed | {n - 1} passed ({n})\n   Duration  "
                f"{rng.uniform(1, 6):.2f}s"
            )
        return (
            f" ✓ src/utils/format.test.ts (9 tests) {rng.randint(3, 40)}ms\n ✓ "
            f"src/components/UsageChart.test.tsx (6 tests) {rng.randint(30, 200)}ms\n\n"
            f" Test Files  5 passed (5)\n      Tests  {n} passed ({n})\n   Duration  "
            f"{rng.uniform(1, 6):.2f}s"
        )
    pkg = "github.com/acme/ingest-worker"
    if failure:
        return (
            f"{failure[1]}\nFAIL\nFAIL\t{pkg}/internal/queue\t{rng.uniform(0.1, 2):.3f}s\n"
            f"ok  \t{pkg}/internal/store\t{rng.uniform(0.1, 2):.3f}s\nFAIL"
        )
    return (
        f"ok  \t{pkg}/internal/queue\t{rng.uniform(0.1, 2):.3f}s\nok  \t{pkg}/internal/store"
        f"\t{rng.uniform(0.1, 2):.3f}s\n?   \t{pkg}/cmd/worker\t[no test files]"
    )


def grep_output(rng: random.Random, project: Project, fn: str) -> str:
    """``rg -n`` output for *fn* in the project."""
    lines = []
    for path in rng.sample(project.files + project.tests, 3):
        for _ in range(rng.randint(1, 3)):
            lines.append(f"{path}:{rng.randint(5, 400)}:    {fn}({pick(rng, _VARS)})")
    return "\n".join(lines)


LINT_OUTPUT = {
    "py": "All checks passed!",
    "rs": "    Checking tilecache v0.4.2 (/home/dev/"
    "projects/tilecache)\n    Finished `dev` profile [unoptimized + debuginfo] "
    "target(s) in 3.12s",
    "ts": "(no output)",
    "go": "(no output)",
}
