#!/usr/bin/env bash
# The run loop's own work per cycle (all but running the gate and the delegates, as trend.json's
# overhead_ms records it) on a repository of FILES files, beside `git status --porcelain` on the
# same repository in the same run (seven times before the run and seven after).
# Usage: bench/run-overhead.sh [FILES]   (default 20000; from the repository root)
set -euo pipefail
files=${1:-20000}
root=$(cd "$(dirname "$0")/.." && pwd)
cargo build --release --quiet --manifest-path "$root/Cargo.toml"
bin="$root/target/release/refine-loop"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
git init -q
python3 - "$files" <<'PY'
import os, sys
files = int(sys.argv[1])
for i in range(files):
    d = f"src/m{i // 100:03d}"
    os.makedirs(d, exist_ok=True)
    with open(f"{d}/f{i % 100:02d}.rs", "w") as f:
        f.write(f"pub fn f{i}() -> u32 {{ {i} }}\n")
with open("findings.txt", "w") as f:
    for i in range(6):
        f.write(f"src/m000/f0{i}.rs:1:1: error: finding {i}\n")
PY
cat >refine-loop.toml <<'TOML'
[[gate.check]]
name = "lint"
category = "lint"
run = "cat findings.txt; test ! -s findings.txt"
parser = "clippy"

[[delegate]]
categories = ["lint"]
run = "sed -i 1d findings.txt; echo '// touched' >> src/m000/f00.rs"
TOML
printf '/.refine-loop\n' >.gitignore
git add -A && git -c user.name=b -c user.email=b@example.invalid commit -qm files
# Freshly written files stat slower until they are written back; both sides start settled.
sync
cat >status-times.py <<'PY'
import subprocess, sys, time
with open(sys.argv[1], "a") as out:
    for _ in range(7):
        start = time.perf_counter()
        subprocess.run(["git", "status", "--porcelain"], stdout=subprocess.DEVNULL, check=True)
        print((time.perf_counter() - start) * 1000, file=out)
PY
printf 'status-times.py\nstatus-ms.txt\n' >>.git/info/exclude
python3 status-times.py status-ms.txt
"$bin" run --max-cycles 5 >/dev/null 2>&1 || true
python3 status-times.py status-ms.txt
python3 - "$work" "$files" <<'PY'
import json, statistics, sys
work = sys.argv[1]
trend = json.load(open(f"{work}/.refine-loop/trend.json"))
overheads = [c["overhead_ms"] for c in trend["cycles"] if c.get("overhead_ms") is not None]
times = [float(line) for line in open(f"{work}/status-ms.txt")]
loop, git = statistics.median(overheads), statistics.median(times)
print(f"files {sys.argv[2]}")
print(f"cycles {len(overheads)}  loop overhead per cycle: median {loop:.0f} ms (all: {overheads})")
print(f"git status --porcelain: median {git:.0f} ms  ratio {loop / git:.2f}x  outcome {trend['outcome']}")
PY
