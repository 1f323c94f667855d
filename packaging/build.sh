#!/usr/bin/env bash
# Build the frozen one-folder app with PyInstaller: dist/memlens/memlens (+ dist/memlens/_internal).
#
#   bash packaging/build.sh
#
# PyInstaller runs in the Python named by $PYTHON; by default the project's .venv if it has
# PyInstaller, else a build venv ($FREEZE_VENV, default build/freeze-venv) made on first use
# with `pip install ".[freeze]"` (memlens's dependencies and PyInstaller).
# MEMLENS_FREEZE_TRANSFORMER=1 also bundles the optional transformer embedder (see memlens.spec).
# TARBALL=1 also packs dist/memlens-<version>-linux-<arch>.tar.gz.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${PYTHON:-}" ]; then
    if [ -x .venv/bin/python ] && .venv/bin/python -c "import PyInstaller" 2>/dev/null; then
        PYTHON=.venv/bin/python
    else
        FREEZE_VENV=${FREEZE_VENV:-build/freeze-venv}
        if ! "$FREEZE_VENV/bin/python" -c "import PyInstaller" 2>/dev/null; then
            echo "== creating $FREEZE_VENV with PyInstaller and memlens's dependencies"
            python3 -m venv "$FREEZE_VENV"
            "$FREEZE_VENV/bin/pip" install -q ".[freeze]"
        fi
        PYTHON=$FREEZE_VENV/bin/python
    fi
fi
echo "== PyInstaller $("$PYTHON" -m PyInstaller --version) in $PYTHON"

export QT_QPA_PLATFORM=${QT_QPA_PLATFORM:-offscreen}
if ! "$PYTHON" packaging/render_icons.py --check; then
    echo "resources/memlens-*.png are not the renders of memlens.svg:" \
        "run packaging/render_icons.py" >&2
    exit 1
fi

"$PYTHON" -m PyInstaller --noconfirm --clean --log-level WARN \
    --distpath dist --workpath build/pyinstaller packaging/memlens.spec

echo "== smoke test"
dist/memlens/memlens --version
version=$(dist/memlens/memlens --version | awk '{print $2}')
du -sh dist/memlens

if [ -n "${TARBALL:-}" ]; then
    tarball=dist/memlens-$version-linux-$(uname -m).tar.gz
    tar -C dist -czf "$tarball" memlens
    du -sh "$tarball"
fi
