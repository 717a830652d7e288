#!/usr/bin/env bash
# The fixed cost of `refine-loop check`: a gate of three trivial commands (`true`, `echo ok`,
# `exit 0`) in a small git repository, against a shell script that runs the same three commands,
# timed as interleaved pairs (each pair runs both, in alternating order). Prints each side's
# median wall time and the median of the per-pair differences (refine-loop minus the script).
# Usage: bench/check-startup.sh [PAIRS]   (default 30; from anywhere in this repository)
set -euo pipefail
pairs=${1:-30}
root=$(cd "$(dirname "$0")/.." && pwd)
cargo build --release --quiet --manifest-path "$root/Cargo.toml"
bin="$root/target/release/refine-loop"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
git init -q
printf 'print("hello")\n' >main.py
cat >refine-loop.toml <<'TOML'
[[gate.check]]
name = "first"
category = "lint"
run = "true"

[[gate.check]]
name = "second"
category = "types"
run = "echo ok"

[[gate.check]]
name = "third"
category = "tests"
run = "exit 0"
TOML
printf '#!/bin/sh\ntrue\necho ok\nexit 0\n' >same.sh
chmod +x same.sh
printf '/.refine-loop\nsame.sh\n' >.gitignore
git add -A && git -c user.name=b -c user.email=b@example.invalid commit -qm start
"$bin" check >/dev/null # warm: the binary and the repository in the page cache
python3 - "$bin" "$pairs" <<'PY'
import statistics, subprocess, sys, time
binary, pairs = sys.argv[1], int(sys.argv[2])
def timed(argv):
    start = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    elapsed = (time.perf_counter() - start) * 1000
    if done.returncode != 0:
        sys.exit(f"check-startup: {argv[0]} exited {done.returncode}")
    return elapsed
ours, script, differences = [], [], []
for pair in range(pairs):
    sides = [("rl", [binary, "check"]), ("sh", ["./same.sh"])]
    if pair % 2:
        sides.reverse()
    got = {name: timed(argv) for name, argv in sides}
    ours.append(got["rl"]); script.append(got["sh"]); differences.append(got["rl"] - got["sh"])
print(f"pairs {pairs}: refine-loop check median {statistics.median(ours):.1f} ms, "
      f"shell script median {statistics.median(script):.1f} ms, "
      f"difference median {statistics.median(differences):.1f} ms "
      f"(min {min(differences):.1f}, max {max(differences):.1f})")
PY
