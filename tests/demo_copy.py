"""A demo home for one test, copied from one written once per test process.

``write_demo`` takes about 1.5 s; a copy of what it wrote takes a few milliseconds and
is the same bytes and times (no demo file holds an absolute path), so a test that
writes to its demo still gets its own.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from core.demo.build import write_demo

_TEMPLATES: dict[tuple[tuple[str, Any], ...], Path] = {}


def demo_copy(dest: Path, **kwargs: Any) -> Path:
    """``write_demo(dest, **kwargs)``, as a copy of the same demo written once; *dest*."""
    key = tuple(sorted(kwargs.items()))
    template = _TEMPLATES.get(key)
    if template is None:
        template = Path(tempfile.mkdtemp(prefix="memlens-demo-template-")) / "home"
        write_demo(template, **kwargs)
        _TEMPLATES[key] = template
    shutil.copytree(template, dest)
    return dest
