#!/usr/bin/env bash
# Peak memory of `refine-loop run` when the delegate creates a 1 GiB sparse file.
# Usage: bench/rss-sparse.sh [SIZE]   (default 1G, as `truncate -s` reads it; from the repository root)
# Builds the release binary, runs one cycle in a temporary repository whose delegate makes the
# file (the gate then fails, and the change is rolled back), and prints the file's size, the
# run's exit code, its wall time and its peak RSS (GNU time's "Maximum resident set size", which
# also covers the children it waited for). The bar: under 64 MB.
set -euo pipefail
size=${1:-1G}
root=$(cd "$(dirname "$0")/.." && pwd)
cargo build --release --quiet --manifest-path "$root/Cargo.toml"
bin="$root/target/release/refine-loop"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
repo="$work/repo"
mkdir -p "$repo"
cd "$repo"
git init -q -b main
printf '/.refine-loop\n' >.gitignore
printf 'src/lib.txt:1:1: error: one\n' >findings.txt
mkdir src
printf 'library\n' >src/lib.txt
cat >refine-loop.toml <<TOML
[[gate.check]]
name = "lint"
category = "lint"
run = "cat findings.txt"
parser = "clippy"

[[gate.check]]
name = "tests"
category = "tests"
# Passes at the baseline, fails with a file added to src/: the change is rolled back.
run = "test -z \"\$(git ls-files --others --exclude-standard -- src)\""

[[delegate]]
categories = ["lint"]
run = "truncate -s $size src/big.bin"
TOML
git add -A
git -c user.name=bench -c user.email=bench@example.invalid commit -q -m bench
if [ -x /usr/bin/time ]; then
  code=0
  /usr/bin/time -v -o "$work/time.txt" "$bin" run --max-cycles 1 >/dev/null 2>"$work/stderr" || code=$?
  rss_kib=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/time.txt")
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$work/time.txt")
else
  # No GNU time: the children's peak RSS from getrusage.
  read -r code rss_kib wall < <(python3 - "$bin" <<'PY'
import resource, subprocess, sys, time
start = time.monotonic()
code = subprocess.run([sys.argv[1], "run", "--max-cycles", "1"], stdout=subprocess.DEVNULL,
                      stderr=subprocess.DEVNULL).returncode
print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, f"{time.monotonic() - start:.2f}s")
PY
)
fi
echo "sparse file: $size; exit code: $code; wall: $wall; peak RSS: $((rss_kib / 1024)) MiB ($rss_kib KiB)"
if [ -e src/big.bin ]; then
  echo "src/big.bin was not rolled back" >&2
  exit 1
fi
if [ "$rss_kib" -ge 62500 ]; then # 64 MB = 62,500 KiB
  echo "over the 64 MB bar" >&2
  exit 1
fi
