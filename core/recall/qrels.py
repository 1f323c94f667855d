"""Labelled queries in BEIR's layout: ``queries.jsonl`` and ``qrels/<split>.tsv``.

BEIR (and most retrieval benchmarks after it) keeps the queries as JSON lines
``{"_id": ..., "text": ...}`` and the relevance judgements as a tab-separated file
``query-id  corpus-id  score`` with a header line. Here the corpus ids are segment
ids of the warm store; a judgement counts when its score is above 0. The queries are
searched across sessions (a qrels file names no session).

:func:`load_any_labels` opens either this layout (a dataset folder, or one ``.tsv``
file whose ``queries.jsonl`` sits beside it or one folder up) or memlens's own
labels JSONL (:func:`core.recall.evaluate.load_labels`).
"""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path

from core.io import jsonio
from core.io.fsutil import read_file
from core.io.problems import FormatError, Problem
from core.recall.evaluate import Label, load_labels

SPLITS = ("test", "dev", "train")
"""The split read from a dataset folder, the first one present."""


def find_beir(path: str | os.PathLike[str]) -> tuple[Path, Path] | None:
    """``(queries.jsonl, qrels tsv)`` of a BEIR folder or qrels file; None if not BEIR."""
    p = Path(path)
    if p.is_dir():
        queries = p / "queries.jsonl"
        for split in SPLITS:
            tsv = p / "qrels" / f"{split}.tsv"
            if queries.is_file() and tsv.is_file():
                return queries, tsv
        return None
    if p.suffix.lower() != ".tsv":
        return None
    for folder in (p.parent, p.parent.parent):
        if (folder / "queries.jsonl").is_file():
            return folder / "queries.jsonl", p
    return None


def load_beir(queries: Path, qrels: Path) -> tuple[list[Label], list[Problem]]:
    """The labels of a BEIR queries file and qrels file (lines: the qrels file's).

    Raises
    ------
    FormatError
        When a file cannot be read, or no query has a relevant id and a text.
    """
    qname, rname = os.fspath(queries), os.fspath(qrels)
    read = jsonio.read_jsonl(read_file(qname), qname)
    problems = list(read.problems)
    texts: dict[str, str] = {}
    for rec in read.objects:
        obj = rec.value
        if not isinstance(obj, dict) or not isinstance(obj.get("text"), str):
            problems.append(Problem(qname, rec.line, "query skipped: it needs '_id' and 'text'"))
            continue
        texts[str(obj.get("_id"))] = obj["text"]
    relevant: dict[str, list[str]] = {}
    first_line: dict[str, int] = {}
    try:
        text = read_file(rname).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FormatError(rname, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    for n, row in enumerate(csv.reader(io.StringIO(text), delimiter="\t"), 1):
        if not row or (n == 1 and row[0].strip().lower() in ("query-id", "query_id", "qid")):
            continue
        if len(row) < 3:
            problems.append(Problem(rname, n, "skipped: it needs query-id, corpus-id, score"))
            continue
        qid, doc, score = (c.strip() for c in row[:3])
        try:
            if float(score) <= 0:
                continue
        except ValueError:
            problems.append(Problem(rname, n, f"skipped: score {score!r} is not a number"))
            continue
        relevant.setdefault(qid, []).append(doc)
        first_line.setdefault(qid, n)
    labels = []
    for qid, docs in relevant.items():
        if qid not in texts:
            problems.append(Problem(rname, first_line[qid], f"query {qid!r} is not in {qname}"))
            continue
        labels.append(Label(texts[qid], tuple(dict.fromkeys(docs)), None, first_line[qid]))
    if not labels:
        raise FormatError(rname, "no usable judgement (query-id, corpus-id, score > 0)")
    return labels, problems


def load_any_labels(path: str | os.PathLike[str]) -> tuple[list[Label], list[Problem]]:
    """Labels from a memlens labels JSONL, a BEIR dataset folder or a BEIR qrels file.

    Raises
    ------
    FormatError
        When nothing usable can be read (the message names the file).
    """
    beir = find_beir(path)
    if beir is not None:
        return load_beir(*beir)
    if Path(path).is_dir():
        raise FormatError(
            os.fspath(path), "not a labels file, nor a BEIR folder (queries.jsonl, qrels/test.tsv)"
        )
    return load_labels(path)
