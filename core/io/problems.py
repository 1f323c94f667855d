"""Problems found while reading agent files: always with the file and line."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warning", "info"]


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing that was wrong with an input file.

    Parameters
    ----------
    file
        Path of the file, as given by the caller.
    line
        1-based line number, or 0 when the problem concerns the whole file.
    message
        A sentence a developer can act on.
    severity
        ``error`` (data skipped), ``warning`` (data recovered) or ``info``.
    """

    file: str
    line: int
    message: str
    severity: Severity = "error"

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.message}"

    def to_json(self) -> dict[str, object]:
        """Return the JSON shape scripts rely on."""
        return {
            "file": self.file,
            "line": self.line,
            "message": self.message,
            "severity": self.severity,
        }


class FormatError(Exception):
    """A file cannot be used at all (bad magic, not a transcript, bad config).

    The message always names the file (and the line or key path where known).
    """

    def __init__(self, file: str, message: str, line: int = 0) -> None:
        self.file = file
        self.line = line
        self.detail = message
        where = f"{file}:{line}" if line else file
        super().__init__(f"{where}: {message}")
