#!/usr/bin/env bash
# Add memlens to the desktop's application menu (for the current user), or take it out again.
#
#   bash packaging/install-desktop.sh [MEMLENS]     # MEMLENS: the memlens executable to start
#   bash packaging/install-desktop.sh --uninstall
#
# Works from a source checkout (resources/ beside packaging/) and from the frozen build, where
# build.sh copies this script into dist/memlens/ (resources in _internal/resources, and
# MEMLENS defaults to the memlens beside it). Elsewhere MEMLENS defaults to `command -v memlens`.
# Writes $XDG_DATA_HOME (default ~/.local/share)/applications/memlens.desktop and the icons
# under icons/hicolor/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
data=${XDG_DATA_HOME:-$HOME/.local/share}
sizes="16 32 48 64 128 256"

if [ "${1:-}" = "--uninstall" ]; then
    rm -f "$data/applications/memlens.desktop" "$data/icons/hicolor/scalable/apps/memlens.svg"
    for size in $sizes; do rm -f "$data/icons/hicolor/${size}x${size}/apps/memlens.png"; done
    echo "memlens removed from the application menu"
    exit 0
fi

for resources in "$here/_internal/resources" "$here/../resources"; do
    [ -f "$resources/memlens.desktop" ] && break
done
if [ ! -f "$resources/memlens.desktop" ]; then
    echo "memlens resources not found beside $here" >&2
    exit 1
fi

exe=${1:-}
if [ -z "$exe" ] && [ -x "$here/memlens" ]; then exe=$here/memlens; fi
if [ -z "$exe" ]; then exe=$(command -v memlens || true); fi
if [ -z "$exe" ] || [ ! -x "$exe" ]; then
    echo "no memlens executable found: pass its path, e.g. $0 ~/.local/bin/memlens" >&2
    exit 1
fi
exe=$(cd "$(dirname "$exe")" && pwd)/$(basename "$exe")

esc=$(printf '%s' "$exe" | sed -e 's/[\\|&]/\\&/g')  # safe in a sed replacement

mkdir -p "$data/applications" "$data/icons/hicolor/scalable/apps"
sed -e "s|^Exec=memlens|Exec=\"$esc\"|" -e "s|^TryExec=memlens|TryExec=$esc|" \
    "$resources/memlens.desktop" > "$data/applications/memlens.desktop"
cp "$resources/memlens.svg" "$data/icons/hicolor/scalable/apps/memlens.svg"
for size in $sizes; do
    mkdir -p "$data/icons/hicolor/${size}x${size}/apps"
    cp "$resources/memlens-$size.png" "$data/icons/hicolor/${size}x${size}/apps/memlens.png"
done
command -v update-desktop-database >/dev/null && update-desktop-database -q "$data/applications" || true
echo "memlens added to the application menu: $data/applications/memlens.desktop -> $exe"
