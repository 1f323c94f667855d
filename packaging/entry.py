"""The frozen app's entry script (memlens.spec): the same ``main`` as the ``memlens`` command."""

from __future__ import annotations

import sys

from app.launcher import main

if __name__ == "__main__":
    sys.exit(main())
