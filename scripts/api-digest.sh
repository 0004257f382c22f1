#!/usr/bin/env bash
# The public API of roomtap's library modules, one line per public symbol (kind, path,
# declaration), sorted: docs/api/MODULE.txt. `make api-digest` rewrites them from the release
# build; `make api-check` (part of `make test`) fails when the build's API differs from the
# checked-in digest, so a change to the public surface is always a reviewed diff.
#
#   scripts/api-digest.sh write|check [BUILD_DIR]
set -euo pipefail
mode=${1:?write or check}
build=${2:-.build/release}
out=docs/api
modules=(RoomTap RoomTapCore RoomTapIngest RoomTapRTP RoomTapContainer RoomTapSinks RoomTapControl
  RoomTapALSA RoomTapWebSocket RoomTapAgent RoomTapFleet RoomTapWebRTC RoomTapSora RoomTapJSON
  RoomTapStorage RoomTapResampling RoomTapSync RoomTapRecorder)
tools=$(dirname "$(readlink -f "$(command -v swift)")")
args=()
for map in "$build"/*.build/module.modulemap Sources/C*/module.modulemap; do
  [ -f "$map" ] && args+=(-Xcc "-fmodule-map-file=$map")
done
for dir in $(pkg-config --cflags-only-I opus glib-2.0 nice 2>/dev/null | sed 's/-I//g'); do
  args+=(-Xcc "-I$dir")
done
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/graphs" "$scratch/digest"
for module in "${modules[@]}"; do
  "$tools/swift-symbolgraph-extract" -module-name "$module" -I "$build/Modules" "${args[@]}" \
    -target "$(uname -m)-unknown-linux-gnu" -minimum-access-level public -skip-synthesized-members \
    -output-dir "$scratch/graphs" >"$scratch/extract.log" 2>&1 || {
    cat "$scratch/extract.log" >&2
    echo "api-digest: cannot read module $module from $build (run: swift build -c release)" >&2
    exit 1
  }
  python3 - "$scratch/graphs/$module.symbols.json" >"$scratch/digest/$module.txt" <<'PY'
import json, sys
graph = json.load(open(sys.argv[1]))
rows = set()
for symbol in graph["symbols"]:
    if symbol.get("accessLevel") not in ("public", "open"):
        continue
    kind = symbol["kind"]["identifier"].removeprefix("swift.")
    path = ".".join(symbol["pathComponents"])
    declaration = "".join(f["spelling"] for f in symbol.get("declarationFragments", []))
    rows.add(f"{path}  [{kind}]  {' '.join(declaration.split())}")
print("\n".join(sorted(rows)))
PY
done
# The curated library: the modules RoomTap re-exports (its users see their public symbols).
{
  cat "$scratch/digest/RoomTap.txt"
  sed -n 's/^@_exported public import \(.*\)$/RoomTap re-exports \1/p' Sources/RoomTap/RoomTap.swift
} | sed '/^$/d' | sort >"$scratch/digest/RoomTap.exports" && mv "$scratch/digest/RoomTap.exports" "$scratch/digest/RoomTap.txt"
case "$mode" in
  write)
    mkdir -p "$out"
    rm -f "$out"/*.txt
    cp "$scratch"/digest/*.txt "$out"/
    echo "api-digest: wrote $(cat "$out"/*.txt | wc -l) public symbols of ${#modules[@]} modules to $out/"
    ;;
  check)
    if ! diff -ru "$out" "$scratch/digest" >"$scratch/diff"; then
      head -60 "$scratch/diff" >&2
      echo "api-check: the public API differs from $out/ (above: - checked in, + built); if the change is meant, run make api-digest and commit $out/" >&2
      exit 1
    fi
    echo "api-check: the public API matches $out/ ($(cat "$out"/*.txt | wc -l) symbols)"
    ;;
  *) echo "usage: $0 write|check [BUILD_DIR]" >&2; exit 64 ;;
esac
