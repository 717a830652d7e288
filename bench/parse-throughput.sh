#!/usr/bin/env bash
# Throughput and peak memory of `refine-loop parse` on a large log, against ripgrep in the same run.
#
# Usage: bench/parse-throughput.sh [SIZE_MIB] [--sizes 100,1000] [--parser NAME] [--fixtures DIR]
#                                  [--interleave file|line] [--runs N] [--rg-arg ARG]...
#   SIZE_MIB      size of the log in MiB (default 500); --sizes runs several sizes in one go
#   --parser      the parser to bench (default clippy): `refine-loop parse -p NAME`, and the
#                 `regex` of the [[pattern]] and [[summary]] entries of gate-parsers/NAME.toml for rg
#   --fixtures    the folder of real tool output (default tests/fixtures/parsers/NAME); its *.txt
#                 files but TOOLS.txt
#   --interleave  file (default): each fixture file stays whole (multi-line formats stay intact)
#                 after 9 noise lines per line of it; line: 9 noise lines before every fixture line
#   --runs        runs per program and size; the table shows the fastest time, the highest RSS
#   --rg-arg      one more argument for rg, repeatable (e.g. --rg-arg=--no-mmap: without it, the
#                 pages of the memory-mapped log count in rg's RSS)
#
# The log: 90% build-log noise (Compiling lines, timestamped lines, progress lines with \r, make
# percentages, ANSI colours), generated deterministically, 10% fixture lines; a ~10 MiB block
# repeated up to the size. Both programs read the same log, warm in the page cache.
# Timed (wall clock; peak RSS from GNU time -v): `refine-loop parse -p NAME --format summary LOG`
# (stdout to a file, read for the summary line: the findings kept are bounded, so it is small)
# and `rg -c -e PAT... LOG` (rg's default: the file memory-mapped).
# Needs: cargo, python3 >= 3.11 (tomllib), rg, GNU time (/usr/bin/time). Temp files go under
# $TMPDIR (default /tmp) and are deleted on exit.
set -euo pipefail

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

sizes=500 parser=clippy fixtures='' interleave=file runs=1 rg_extra=()
while (($#)); do
  case $1 in
    --sizes) sizes=$2; shift 2 ;;
    --sizes=*) sizes=${1#*=}; shift ;;
    --parser | -p) parser=$2; shift 2 ;;
    --parser=*) parser=${1#*=}; shift ;;
    --fixtures) fixtures=$2; shift 2 ;;
    --fixtures=*) fixtures=${1#*=}; shift ;;
    --interleave) interleave=$2; shift 2 ;;
    --interleave=*) interleave=${1#*=}; shift ;;
    --runs) runs=$2; shift 2 ;;
    --runs=*) runs=${1#*=}; shift ;;
    --rg-arg) rg_extra+=("$2"); shift 2 ;;
    --rg-arg=*) rg_extra+=("${1#*=}"); shift ;;
    -h | --help) usage; exit 0 ;;
    [0-9]*) sizes=$1; shift ;;
    *) echo "parse-throughput: unknown argument: $1" >&2; usage >&2; exit 2 ;;
  esac
done
[[ $sizes =~ ^[0-9]+(,[0-9]+)*$ ]] || { echo "parse-throughput: bad size list: $sizes" >&2; exit 2; }
[[ $interleave == file || $interleave == line ]] || { echo "parse-throughput: --interleave file|line" >&2; exit 2; }
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "parse-throughput: --runs N (N >= 1)" >&2; exit 2; }

root=$(cd "$(dirname "$0")/.." && pwd)
fixtures=${fixtures:-$root/tests/fixtures/parsers/$parser}
definition=$root/gate-parsers/$parser.toml
for tool in cargo python3 rg /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "parse-throughput: $tool not found" >&2; exit 2; }
done
shopt -s nullglob
fixture_files=()
for f in "$fixtures"/*.txt; do [[ $(basename "$f") == TOOLS.txt ]] || fixture_files+=("$f"); done
shopt -u nullglob
((${#fixture_files[@]})) || { echo "parse-throughput: no *.txt fixtures in $fixtures" >&2; exit 2; }

# 1. The release binary (CARGO_TARGET_DIR if set, else the repository's target/).
target_dir=${CARGO_TARGET_DIR:-$root/target}
[[ $target_dir == /* ]] || target_dir=$PWD/$target_dir
echo "building: CARGO_TARGET_DIR=$target_dir cargo build --release" >&2
CARGO_TARGET_DIR=$target_dir cargo build --release --quiet --manifest-path "$root/Cargo.toml"
bin=$target_dir/release/refine-loop

work=$(mktemp -d "${TMPDIR:-/tmp}/parse-throughput.XXXXXX")
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# 3a. rg's patterns: the `regex` of each [[pattern]] and [[summary]] entry (not continuations,
# skips or ends), NUL-separated; the ones rg rejects are dropped and named. Named groups become
# non-capturing groups (the same matches): rg joins its -e patterns with `|`, and a name used
# by two patterns (`severity`, `message`) is then a "duplicate capture group name" error.
rg_patterns=()
if [[ -f $definition ]]; then
  while IFS= read -r -d '' pattern; do
    if rg -q -e "$pattern" - </dev/null 2>"$work/rg-error" || [[ $? == 1 ]]; then
      rg_patterns+=("$pattern")
    else
      echo "rg rejects a pattern of $parser, dropped: $pattern ($(head -c 300 "$work/rg-error" | tr '\n' ' '))" >&2
    fi
  done < <(python3 - "$definition" <<'PY'
import re, sys, tomllib
with open(sys.argv[1], "rb") as f:
    definition = tomllib.load(f)
named = re.compile(r"(?<!\\)((?:\\\\)*)\(\?P?<([A-Za-z_][A-Za-z0-9_]*)>")
for table in ("pattern", "summary"):
    for entry in definition.get(table, []):
        if isinstance(entry, dict) and isinstance(entry.get("regex"), str):
            sys.stdout.write(named.sub(r"\1(?:", entry["regex"]) + "\0")
PY
  )
else
  echo "parse-throughput: no $definition (a built-in or problem-matcher parser?): rg is not run" >&2
fi
rg_args=()
for pattern in "${rg_patterns[@]}"; do rg_args+=(-e "$pattern"); done
if ((${#rg_args[@]})) && ! { rg -q "${rg_args[@]}" - </dev/null 2>"$work/rg-error" || [[ $? == 1 ]]; }; then
  echo "parse-throughput: rg rejects the patterns together:" >&2; cat "$work/rg-error" >&2; exit 1
fi
echo "rg patterns (${#rg_patterns[@]}):" >&2
for pattern in "${rg_patterns[@]}"; do echo "  $pattern" >&2; done

# 2. A ~10 MiB block: 9 noise lines per fixture line, whole rounds over the fixtures.
python3 - "$work/block" "$interleave" "${fixture_files[@]}" <<'PY'
import random, sys
out, interleave, paths = sys.argv[1], sys.argv[2], sys.argv[3:]
rng = random.Random(20240501)
units = []
for path in paths:
    data = open(path, "rb").read()
    if data and not data.endswith(b"\n"):
        data += b"\n"
    lines = data.splitlines(keepends=True)
    if lines:
        units += [[l] for l in lines] if interleave == "line" else [lines]
crates = b"serde serde_json tokio regex memchr clap syn quote proc-macro2 libc itoa ryu hashbrown \
indexmap anyhow thiserror tracing once_cell bytes futures-util mio smallvec log rand getrandom \
cfg-if unicode-ident aho-corasick parking_lot lock_api scopeguard toml winnow".split()
steps = [b"apt-get install -y build-essential", b"pip install -r requirements.txt",
         b"npm ci --no-audit", b"make -j2", b"cargo fetch", b"chmod +x ./scripts/ci.sh"]
def ts(i):
    s = 3600 + i // 7
    return b"2024-05-01T%02d:%02d:%02d.%03dZ" % (s // 3600 % 24, s // 60 % 60, s % 60, i * 37 % 1000)
def noise(i):
    kind = rng.randrange(10)
    c = rng.choice(crates)
    v = b"v%d.%d.%d" % (rng.randrange(3), rng.randrange(40), rng.randrange(300))
    if kind <= 2:
        return b"   Compiling %s %s\n" % (c, v)
    if kind == 3:
        return b"\x1b[1m\x1b[32m   Compiling\x1b[0m %s %s (registry+https://github.com/rust-lang/crates.io-index)\n" % (c, v)
    if kind == 4:
        return b"%s ##[info] fetched artifact %016x (%d KiB) in %d ms\n" % (ts(i), rng.getrandbits(64), rng.randrange(1, 99999), rng.randrange(1, 5000))
    if kind == 5:
        return b"%s Step %d/%d : RUN %s\n" % (ts(i), rng.randrange(1, 30), 30, rng.choice(steps))
    if kind == 6:
        p = rng.randrange(101)
        return b"[%3d%%] Building C object src/CMakeFiles/%s.dir/%s_%d.c.o\n" % (p, c, c, rng.randrange(100))
    if kind == 7:
        n = rng.randrange(50, 400)
        bar = lambda k: b"    Building [%s>%s] %d/%d: %s" % (b"=" * (k * 25 // n), b" " * (25 - k * 25 // n), k, n, c)
        k = rng.randrange(1, n)
        return bar(k // 3) + b"\r" + bar(k // 2) + b"\r" + bar(k) + b"\n"
    if kind == 8:
        return b" ---> Running in %012x\n" % rng.getrandbits(48)
    return b"%s   Downloaded %s %s (%d.%d KB)\n" % (ts(i), c, v, rng.randrange(900), rng.randrange(10))
block, size, i = [], 0, 0
while size < 10 << 20:
    for unit in units:
        for _ in range(9 * len(unit)):
            line = noise(i); i += 1
            block.append(line); size += len(line)
        block += unit; size += sum(map(len, unit))
with open(out, "wb") as f:
    f.writelines(block)
PY
block_bytes=$(stat -c %s "$work/block")

field() { awk -F': ' -v key="$2" 'index($0, key) {print $NF}' "$1"; }
now() { date +%s%N; }
seconds() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", (b - a) / 1e9}'; } # seconds START END
best() { # best FILE SECONDS RSS_KB: keeps the fastest time and the highest RSS
  local t=$2 rss=$3
  if [[ -s $1 ]]; then
    read -r old_t old_rss <"$1"
    t=$(awk -v a="$t" -v b="$old_t" 'BEGIN {print (a < b ? a : b)}')
    ((old_rss > rss)) && rss=$old_rss
  fi
  echo "$t $rss" >"$1"
}

rows=$work/rows.tsv
: >"$rows"
IFS=, read -r -a size_list <<<"$sizes"
for size in "${size_list[@]}"; do
  copies=$(((size * 1048576 + block_bytes - 1) / block_bytes))
  log=$work/log.txt
  for ((c = 0; c < copies; c++)); do cat "$work/block"; done >"$log"
  log_bytes=$(stat -c %s "$log")
  cat "$log" >/dev/null # warm in the page cache for both programs
  rm -f "$work/rl.best" "$work/rg.best"
  rl_summary=- rg_count=-
  for ((run = 0; run < runs; run++)); do
    # 3b. refine-loop
    start=$(now)
    if ! /usr/bin/time -v -o "$work/rl.time" "$bin" parse -p "$parser" --format summary "$log" \
      >"$work/rl.out" 2>"$work/rl.err"; then
      echo "refine-loop parse failed:" >&2; cat "$work/rl.err" "$work/rl.time" >&2; exit 1
    fi
    end=$(now)
    best "$work/rl.best" "$(seconds "$start" "$end")" "$(field "$work/rl.time" "Maximum resident set size")"
    rl_summary=$(tail -n 1 "$work/rl.out")
    # 3c. ripgrep
    if ((${#rg_args[@]})); then
      status=0 start=$(now)
      /usr/bin/time -v -o "$work/rg.time" rg -c ${rg_extra[@]+"${rg_extra[@]}"} "${rg_args[@]}" "$log" \
        >"$work/rg.out" 2>"$work/rg.err" || status=$?
      end=$(now)
      ((status <= 1)) || { echo "rg failed:" >&2; cat "$work/rg.err" >&2; exit 1; }
      best "$work/rg.best" "$(seconds "$start" "$end")" "$(field "$work/rg.time" "Maximum resident set size")"
      rg_count=$(cat "$work/rg.out"); rg_count=${rg_count:-0}
    fi
  done
  read -r rl_s rl_rss <"$work/rl.best"
  if [[ -s $work/rg.best ]]; then read -r rg_s rg_rss <"$work/rg.best"; else rg_s=- rg_rss=-; fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$log_bytes" "$rl_s" "$rl_rss" "$rg_s" "$rg_rss" \
    "$rl_summary" "$rg_count" "$copies" >>"$rows"
  rm -f "$log"
done

# 4. One table.
python3 - "$rows" "$parser" "$block_bytes" "$interleave" "$runs" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)" "${rg_extra[*]-}" <<'PY'
import re, sys
rows, parser, block, interleave, runs, cores, load, rg_extra = sys.argv[1:]
MiB = 1 << 20
print(f"parser {parser}: log of a {int(block) / MiB:.1f} MiB block repeated (90% noise, fixtures "
      f"interleaved by {interleave}); best of {runs} run(s); {cores} cores, load {load}"
      + (f"; rg {rg_extra}" if rg_extra else ""))
head = ("log MiB", "rl s", "rl MiB/s", "rl RSS MiB", "rg s", "rg MiB/s", "rg RSS MiB",
        "rl/rg time", "rl findings", "rg lines")
table, summaries = [head], []
for line in open(rows):
    size, rl_s, rl_rss, rg_s, rg_rss, summary, rg_count, copies = line.rstrip("\n").split("\t")
    mib = int(size) / MiB
    rate = lambda s: f"{mib / float(s):.0f}" if s != "-" and float(s) > 0 else "-"
    m = re.search(r": (\d+) errors, (\d+) warnings, (\d+) notes", summary)
    found = str(sum(map(int, m.groups()))) if m else "?"
    table.append((f"{mib:.0f}", rl_s, rate(rl_s), f"{int(rl_rss) / 1024:.1f}",
                  rg_s, rate(rg_s), f"{int(rg_rss) / 1024:.1f}" if rg_rss != "-" else "-",
                  f"{float(rl_s) / float(rg_s):.1f}x" if rg_s != "-" and float(rg_s) > 0 else "-",
                  found, rg_count))
    summaries.append(f"  {mib:.0f} MiB: {summary}")
widths = [max(len(r[i]) for r in table) for i in range(len(head))]
for r in table:
    print("  ".join(c.rjust(w) for c, w in zip(r, widths)))
print("refine-loop's summary lines (rl findings = errors + warnings + notes; rg lines = lines "
      "matching any pattern):")
print("\n".join(summaries))
PY
