"""The fuzz tier: mutate real agent files, run every read command and loader on them.

A case copies a base tree (the demo OpenClaw home, or the real pi fixtures),
lets the live follower load it, mutates one to three of its files, then runs
the app's loaders and a draw of read commands in-process, and counts:

* tracebacks: an exception escaping ``core.cli.main.run_cli`` or a loader (or a hang);
* unexpected errors: "a bug in memlens", or an exit status other than 0 and 1;
* errors without a file name: exit 1 whose message names no file of the case,
  and problems without a file;
* input bytes changed: the tree's hash after differs from before.

Replay one case: ``python -m tests.fuzz.harness --seed S --case N -v``.
Long run: ``python -m tests.fuzz.harness --budget 5000`` (or pytest ``--fuzz-budget``).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import os
import random
import re
import shutil
import signal
import socket
import stat
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tests.fuzz.mutate import mutate_binary, mutate_text, mutate_vectors

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

LINE_LIMIT = 512 * 1024
"""The line limit during the fuzz (small, so over-limit lines stay cheap)."""
COMMAND_TIMEOUT = 60.0
"""Seconds one command or loader may take: a FIFO opened for reading hangs forever."""
KEEP_SESSIONS = ("4079021e", "6c38d588", "1817a741", "929b7198")
"""Demo sessions kept in the base (small ones, one with a compaction, one topic file)."""
FIXTURES = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures" / "pi-v1"
COUNTS = ("tracebacks", "unexpected", "unnamed", "changed")


class Hang(BaseException):
    """A command ran past :data:`COMMAND_TIMEOUT` (a BaseException: nothing swallows it)."""


@dataclass
class Report:
    """What a fuzz run found."""

    seed: int
    cases: int = 0
    commands: int = 0
    loaders: int = 0
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COUNTS, 0))
    failures: list[str] = field(default_factory=list)
    seconds: float = 0.0
    errors: dict[str, int] = field(default_factory=dict)
    """Exit-1 messages (paths and numbers blanked) and how often: to read, not to assert."""

    def add(self, kind: str, case: str, detail: str) -> None:
        """Count one failure of *kind* and keep its description."""
        self.counts[kind] += 1
        if len(self.failures) < 200:
            self.failures.append(f"[{kind}] {case}\n    {detail}")

    @property
    def clean(self) -> bool:
        """True when all four counts are 0."""
        return not any(self.counts.values())

    def summary(self) -> str:
        """One paragraph for people (and the README)."""
        counts = ", ".join(f"{k} {v}" for k, v in self.counts.items())
        return (
            f"fuzz seed {self.seed}: {self.cases} cases, {self.commands} commands, "
            f"{self.loaders} loader runs in {self.seconds:.0f} s: {counts}"
        )


# -- bases ---------------------------------------------------------------------------
def build_bases(root: Path) -> dict[str, Path]:
    """The trees cases start from: a trimmed demo OpenClaw home and the pi fixtures."""
    from core.demo.build import write_demo

    demo = root / "openclaw"
    write_demo(demo, seed=7, now_ms=1_790_000_000_000, segments=120)
    for sessions in (demo / "agents").glob("*/sessions"):
        for p in sessions.glob("*.jsonl"):
            if not p.name.startswith(KEEP_SESSIONS):
                p.unlink()
    pi = root / "pi" / "--home-dev-project--"
    pi.mkdir(parents=True)
    for p in sorted(FIXTURES.glob("*.jsonl")):
        shutil.copyfile(p, pi / p.name)
    return {"openclaw": demo, "pi": root / "pi"}


def _targets(tree: Path) -> list[Path]:
    return sorted(
        p
        for p in tree.rglob("*")
        if p.is_file() and not p.is_symlink() and p.suffix in (".jsonl", ".json", ".bin", ".sqlite")
    )


# -- the tree's bytes ------------------------------------------------------------------
def tree_hash(tree: Path) -> str:
    """Names, kinds and bytes of everything under *tree* (special files never opened)."""
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(tree):
        dirnames.sort()
        for name in sorted(filenames + [d for d in dirnames if os.path.islink(Path(dirpath, d))]):
            p = Path(dirpath, name)
            st = p.lstat()
            h.update(f"{p.relative_to(tree)}\0{stat.S_IFMT(st.st_mode)}\0".encode())
            if stat.S_ISLNK(st.st_mode):
                h.update(os.readlink(p).encode())
            elif stat.S_ISREG(st.st_mode):
                h.update(p.read_bytes())
    return h.hexdigest()


# -- mutations of whole files -------------------------------------------------------------
def _special(rng: random.Random, path: Path, keep: list[Any]) -> str:
    path.unlink()
    kind = rng.choice(("fifo", "socket", "zero", "null", "urandom", "link-fifo", "dir", "dangling"))
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        if len(str(path)) > 100:  # AF_UNIX paths are short: use a FIFO instead
            os.mkfifo(path)
            return "replaced by a FIFO"
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(str(path))
        keep.append(sock)
    elif kind in ("zero", "null", "urandom"):
        path.symlink_to(f"/dev/{kind}")
    elif kind == "link-fifo":
        target = path.with_name(path.name + ".fifo-target")
        os.mkfifo(target)
        path.symlink_to(target.name)
    elif kind == "dir":
        path.mkdir()
    else:
        path.symlink_to(path.name + ".missing")
    return f"replaced by {kind}"


def mutate_file(rng: random.Random, path: Path, keep: list[Any]) -> str:
    """Mutate *path* in place; returns what was done."""
    if rng.random() < 0.07:
        return _special(rng, path, keep)
    data = path.read_bytes()
    done: list[str] = []
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        if path.suffix == ".bin":
            data, what = mutate_vectors(rng, data)
        elif path.suffix == ".sqlite":
            data, what = mutate_binary(rng, data)
        else:
            data, what = mutate_text(rng, data, LINE_LIMIT)
        done.append(what)
    if rng.random() < 0.25:  # rotation: a new file (new inode) under the old name
        tmp = path.with_name(path.name + ".rotating")
        tmp.write_bytes(data)
        os.replace(tmp, path)
        done.append("written as a new file (rotated)")
    else:
        path.write_bytes(data)
    return "; ".join(done)


# -- running ------------------------------------------------------------------------------
@contextlib.contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    def ring(signum: int, frame: Any) -> None:
        raise Hang(f"no answer after {seconds:.0f} s")

    old = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


@contextlib.contextmanager
def _captured() -> Iterator[dict[str, bytes]]:
    """Stdout and stderr as real byte streams (``sys.stdout.buffer`` included)."""
    got: dict[str, bytes] = {}
    out, err = io.BytesIO(), io.BytesIO()
    old = sys.stdout, sys.stderr
    new_out = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    new_err = io.TextIOWrapper(err, encoding="utf-8", errors="backslashreplace")
    sys.stdout, sys.stderr = new_out, new_err
    try:
        yield got
    finally:
        for stream in (new_out, new_err):
            with contextlib.suppress(Exception):
                stream.flush()
        got["out"], got["err"] = out.getvalue(), err.getvalue()
        sys.stdout, sys.stderr = old


def _commands(rng: random.Random, tree: Path, base: str, mutated: list[Path]) -> list[list[str]]:
    p = str(tree)
    transcripts = sorted(
        str(t) for t in tree.rglob("*.jsonl") if "sessions" in t.parts or base == "pi"
    )
    hit = [str(m) for m in mutated if m.suffix == ".jsonl" and str(m) in transcripts]
    t = rng.choice(hit or transcripts or [str(tree / "missing.jsonl")])
    window = str(rng.choice((1, 100, 4000, 32000, 200000, 10**12)))
    on_transcript = [
        ["show", t],
        ["show", t, "--json", "--full"],
        ["show", t, "--at", f"#{rng.randint(1, 400)}"],
        ["compactions", t],
        ["compactions", t, "--json"],
        ["plan", t, "--window", window],
        ["budget", t],
        ["budget", t, "--json", "--window", window],
        ["overflow", t, "--window", window],
        ["trim", t, "--window", window],
        ["compact", t, "--json"],
        ["info", t],
    ]
    on_home = [
        ["info", p],
        ["info", p, "--json"],
        ["sessions", p],
        ["sessions", p, "--json"],
        ["backups", p],
    ]
    on_store = [
        ["facts", p, "--all"],
        ["facts", p, "--all", "--json"],
        ["segments", p, "--limit", "0"],
        ["segments", p, "--json"],
        ["recall", p, "database config token", "--min-score", "0"],
        ["recall", p, "dashboard", "--json", "--cross-session"],
        ["knowledge", p, "config database"],
        ["knowledge", p, "token", "--mode", "adaptive", "--json"],
        ["fact", "add", p, "a new fact", "--type", "decision", "--dry-run"],
    ]
    pool = on_transcript + on_home + ([] if base == "pi" else on_store)
    chosen = rng.sample(pool, min(len(pool), 6))
    return [["info", p, "--json"], *chosen]


def _named(message: str, tree: Path, mutated: list[Path]) -> bool:
    return str(tree) in message or any(m.name in message for m in mutated)


def run_command(
    argv: list[str], tree: Path, mutated: list[Path], case: str, report: Report
) -> None:
    """Run one CLI command in-process and count what went wrong."""
    from core.cli.main import run_cli as main

    report.commands += 1
    where = f"{case} :: memlens {' '.join(a[:80] for a in argv)}"
    with _captured() as got:
        try:
            with _deadline(COMMAND_TIMEOUT):
                code = main(argv)
        except Hang as exc:
            report.add("tracebacks", where, f"hang: {exc}")
            return
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 2
        except BaseException:
            report.add("tracebacks", where, traceback.format_exc(limit=-8))
            return
    message = got["err"].decode("utf-8", "replace")
    if "a bug in memlens" in message or code not in (0, 1):
        report.add("unexpected", where, f"exit {code}: {message.strip()[:2000]}")
    elif code == 1 and not _named(message, tree, mutated):
        report.add("unnamed", where, message.strip()[:2000])
    if code == 1:
        said = re.sub(r"\d+", "N", message.replace(str(tree), "<case>"))[:150].strip()
        key = f"{argv[0]} {argv[1] if argv[0] == 'fact' else ''}: {said}"
        report.errors[key] = report.errors.get(key, 0) + 1


def _loader(name: str, fn: Callable[[], Any], case: str, report: Report) -> Any:
    from core.io.problems import FormatError

    report.loaders += 1
    try:
        with _deadline(COMMAND_TIMEOUT):
            return fn()
    except FormatError as exc:
        if not exc.file:
            report.add("unnamed", f"{case} :: {name}", str(exc))
    except Hang as exc:
        report.add("tracebacks", f"{case} :: {name}", f"hang: {exc}")
    except BaseException:
        report.add("tracebacks", f"{case} :: {name}", traceback.format_exc(limit=-8))
    return None


def run_loaders(tree: Path, case: str, report: Report, live: Any) -> None:
    """What the app does with a place: load, timelines, budgets, recall, live, home scan."""
    from core.context.budget import budget_for
    from core.dataset.home_scan import scan_home
    from core.dataset.load import load_dataset
    from core.dataset.open_recall import open_recall
    from core.openclaw.memindex import open_memory_index
    from core.timeline.arrays import build_timeline
    from core.transcript import context_at, context_size

    if live is not None:
        _loader("live poll", lambda: live.poll(everything=True), case, report)
    data = _loader("load_dataset", lambda: load_dataset(tree), case, report)
    _loader("scan_home", lambda: scan_home(tree), case, report)
    if data is None:
        return
    for p in data.problems:
        if not p.file:
            report.add("unnamed", f"{case} :: load_dataset", f"problem without a file: {p}")
    for session in data.sessions:
        label = f"timeline {Path(session.path).name}"

        def views(s: Any = session) -> None:
            budget = budget_for(s, config=data.config)
            build_timeline(s, budget)
            context_size(context_at(s))
            for b in s.parent_breaks():
                assert b.line > 0 and s.path

        _loader(label, views, case, report)
    _loader("open_recall", lambda: open_recall(data, cache_dir=None, embedder="hash"), case, report)
    for path in data.discovery.memory_indexes:

        def index(path: Path = path) -> None:
            with open_memory_index(path) as idx:
                idx.meta()
                idx.files()
                idx.chunk_counts()
                idx.sources()
                idx.fts_rows()
                for _ in idx.iter_chunks(with_embedding=True):
                    pass

        _loader(f"memory index {path.name}", index, case, report)


def _follower(tree: Path, case: str, report: Report) -> Any:
    from core.dataset.load import load_dataset
    from core.live.follow import LiveFollower

    data = _loader("load_dataset (before)", lambda: load_dataset(tree), case, report)
    if data is None:
        return None
    return _loader("live follower", lambda: LiveFollower(data), case, report)


def run_case(bases: dict[str, Path], work: Path, seed: int, index: int, report: Report) -> None:
    """One case: copy a base, follow it live, mutate, run loaders and commands."""
    rng = random.Random(f"{seed}:{index}")
    base = rng.choice(("openclaw", "openclaw", "openclaw", "pi"))
    tree = work / f"case{index}"
    shutil.copytree(bases[base], tree, symlinks=True)
    keep: list[Any] = []
    try:
        live = _follower(tree, f"seed {seed} case {index} ({base}, before mutating)", report)
        files = _targets(tree)
        picked = rng.sample(files, min(len(files), rng.choice((1, 1, 2, 3))))
        done = [f"{f.relative_to(tree)}: {mutate_file(rng, f, keep)}" for f in picked]
        case = f"seed {seed} case {index} ({base}; {' | '.join(done)})"
        before = tree_hash(tree)
        run_loaders(tree, case, report, live)
        for argv in _commands(rng, tree, base, picked):
            run_command(argv, tree, picked, case, report)
        if tree_hash(tree) != before:
            report.add("changed", case, "the input tree's bytes changed")
        report.cases += 1
    finally:
        for sock in keep:
            sock.close()
        shutil.rmtree(tree, ignore_errors=True)


def fuzz(budget: int, seed: int, work: Path, *, first: int = 0, verbose: bool = False) -> Report:
    """Run *budget* cases from case number *first*."""
    from core.io.limits import set_max_line_bytes

    report = Report(seed)
    started = time.perf_counter()
    set_max_line_bytes(LINE_LIMIT)
    try:
        bases = build_bases(work / "bases")
        for index in range(first, first + budget):
            run_case(bases, work, seed, index, report)
            if verbose and index % 25 == 0:
                print(f"case {index}: {report.summary()}", file=sys.__stderr__, flush=True)
    finally:
        set_max_line_bytes(None)
        report.seconds = time.perf_counter() - started
    return report


def main(argv: list[str] | None = None) -> int:
    """Command line of a long run: prints the counts and every failure."""
    import tempfile

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--budget", type=int, default=50, help="number of cases")
    ap.add_argument("--seed", type=int, default=int(time.time()) % 100_000)
    ap.add_argument("--case", type=int, default=0, help="first case number (replay one)")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="memlens-fuzz-") as work:
        report = fuzz(args.budget, args.seed, Path(work), first=args.case, verbose=args.verbose)
    print(report.summary())
    for failure in report.failures:
        print(failure)
    if args.verbose:
        for key, n in sorted(report.errors.items(), key=lambda kv: -kv[1]):
            print(f"{n:6}  {key}")
    return 0 if report.clean else 1


if __name__ == "__main__":
    sys.exit(main())
