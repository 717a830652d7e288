#!/usr/bin/env bash
# Release-build time of refine-loop from a clean clone: for each revision given (default HEAD),
# clone this repository into a temporary folder, check the revision out, and time
# `cargo build --release --timings` with a target dir of its own (nothing reused; the crate
# downloads in ~/.cargo are). Prints wall, user and sys time and peak RSS, then the five longest
# units of cargo's timings. Revisions run one after another, so that they compete for nothing.
#
# Usage: bench/build-time.sh [REV...]        e.g. bench/build-time.sh a0e515d HEAD
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -gt 0 ] || set -- HEAD
for rev in "$@"; do
  sha=$(git -C "$root" rev-parse --verify "$rev^{commit}")
  dir=$(mktemp -d)
  git clone -q "$root" "$dir/clone"
  git -C "$dir/clone" checkout -q "$sha"
  ( cd "$dir/clone" &&
    /usr/bin/time -f "%e %U %S %M" -o "$dir/time" cargo build --release --timings --quiet )
  read -r wall user sys rss < "$dir/time"
  printf '%s (%s): %s s wall, %s s user, %s s sys, %s MiB peak; %s CPUs, load %s\n' \
    "$rev" "${sha:0:7}" "$wall" "$user" "$sys" "$((rss / 1024))" "$(nproc)" \
    "$(cut -d' ' -f1-3 /proc/loadavg)"
  python3 - "$dir"/clone/target/cargo-timings/cargo-timing-*.html <<'PY'
import json, re, sys
text = open(sys.argv[1]).read()
units = json.loads(re.search(r"const UNIT_DATA = (\[.*?\]);\n", text, re.S).group(1))
for unit in sorted(units, key=lambda u: -u["duration"])[:5]:
    print(f"  {unit['duration']:6.1f} s  {unit['name']} {unit.get('target', '').strip()}")
PY
  rm -rf "$dir"
done
