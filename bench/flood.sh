#!/usr/bin/env bash
# Peak memory of `refine-loop check` on a gate that floods its output.
# Usage: bench/flood.sh [BYTES]   (default 2 GiB; from the repository root)
# Prints, for a flood of plain lines and a flood of findings: bytes, seconds, MB/s, peak RSS.
set -euo pipefail
bytes=${1:-2147483648}
root=$(cd "$(dirname "$0")/.." && pwd)
cargo build --release --quiet --manifest-path "$root/Cargo.toml"
bin="$root/target/release/refine-loop"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

flood() { # flood NAME LINE
  local name=$1 line=$2 dir="$work/$1"
  mkdir -p "$dir"
  cat >"$dir/refine-loop.toml" <<TOML
[[gate.check]]
name = "flood"
category = "lint"
parser = "clippy"
run = "yes '$line' | head -c $bytes; exit 1"
TOML
  /usr/bin/time -v -o "$dir/time.txt" "$bin" check --target "$dir" >/dev/null || true
  local rss seconds output
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$dir/time.txt")
  seconds=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$dir/time.txt")
  output=$(python3 -c "import json,sys; s=json.load(open(sys.argv[1])); c=s['checks'][0]; print(c['output_bytes'], s['failed_count'])" "$dir/.refine-loop/cycle-0/gate-summary.json")
  read -r out_bytes failures <<<"$output"
  python3 - "$name" "$out_bytes" "$failures" "$seconds" "$rss" "$(stat -c %s "$dir/.refine-loop/cycle-0/gate-output.txt")" <<'PY'
import sys
name, out_bytes, failures, wall, rss_kb, log = sys.argv[1:]
parts = [float(p) for p in wall.split(':')]
seconds = sum(p * 60 ** i for i, p in enumerate(reversed(parts)))
print(f"{name:9} output {int(out_bytes)/2**20:8.0f} MiB  failures {int(failures):>10}  "
      f"{seconds:6.1f} s  {int(out_bytes)/2**20/seconds:6.0f} MiB/s  peak RSS {int(rss_kb)/1024:5.1f} MiB  "
      f"log {int(log)/2**20:.1f} MiB")
PY
}

flood plain "compiling something, nothing to see in this line of the log"
flood findings "src/lib.rs:12:5: error: a finding on every line of the flood"
# Findings of 60 KB each: fields are cut and storage has a budget.
flood long-findings "src/lib.rs:12:5: error: $(head -c 60000 /dev/zero | tr '\0' x)"
