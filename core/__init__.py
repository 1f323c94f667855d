"""memlens core: the memory engine of OpenClaw / pi agents, without any Qt."""

from __future__ import annotations

__version__ = "0.1.0"
