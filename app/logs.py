"""The app's log: a rotating file in the user data directory, secrets masked.

:func:`setup_logging` sends every record of the ``memlens`` loggers (job failures with
their tracebacks among them, see :mod:`widgets.common.jobs`) and of the root logger to
``<data dir>/logs/memlens.log`` (1 MB, three old files kept), and so does an uncaught
exception (a failing slot's among them). Each record passes
:class:`RedactFilter` first: a key quoted in an exception never reaches the file.
"""

from __future__ import annotations

import logging
import sys
from logging.handlers import RotatingFileHandler
from typing import TYPE_CHECKING, Any

from app.paths import data_dir
from core.safety.redact import redact

if TYPE_CHECKING:
    from pathlib import Path
    from types import TracebackType

LOG_BYTES = 1_000_000
LOG_BACKUPS = 3
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s [%(threadName)s] %(message)s"


def log_file() -> Path:
    """Where the app writes its log (``<data dir>/logs/memlens.log``)."""
    return data_dir() / "logs" / "memlens.log"


class RedactFilter(logging.Filter):
    """Masks secrets in a record's message and traceback before any handler writes it."""

    def filter(self, record: logging.LogRecord) -> bool:  # noqa: D102 - logging.Filter API
        text = redact(record.getMessage())
        if record.exc_info:
            # Formatted here, masked, and kept as the record's exc_text: the formatter
            # prints exc_text instead of formatting the traceback again.
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        elif record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        record.msg, record.args = text, None
        return True


def setup_logging(path: Path | None = None, level: int = logging.INFO) -> Path:
    """Log to *path* (default :func:`log_file`), rotating, through :class:`RedactFilter`.

    Called again (a second window, a test), it replaces the handler it added before.
    """
    target = path if path is not None else log_file()
    target.parent.mkdir(parents=True, exist_ok=True)
    root = logging.getLogger()
    for old in [h for h in root.handlers if getattr(h, "memlens", False)]:
        root.removeHandler(old)
        old.close()
    handler = RotatingFileHandler(
        target, maxBytes=LOG_BYTES, backupCount=LOG_BACKUPS, encoding="utf-8"
    )
    handler.memlens = True  # type: ignore[attr-defined]
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    handler.addFilter(RedactFilter())
    root.addHandler(handler)
    if root.level == logging.NOTSET or root.level > level:
        root.setLevel(level)
    if not getattr(sys.excepthook, "memlens", False):
        sys.excepthook = _logging_excepthook(sys.excepthook)
    return target


def _logging_excepthook(previous: Any) -> Any:
    """An excepthook that logs an uncaught exception (a slot's, too) before *previous* runs."""

    def hook(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        logging.getLogger("memlens").error("uncaught exception", exc_info=(kind, exc, tb))
        previous(kind, exc, tb)

    hook.memlens = True  # type: ignore[attr-defined]
    return hook
