#!/usr/bin/env bash
# Throughput and peak memory of `refine-loop parse` on a large log, against ripgrep (and reviewdog's
# errorformat) in the same run, on the same file.
#
# Usage: bench/parse-throughput.sh [SIZE_MIB] [--sizes 100,1000] [--parser NAME] [--fixtures DIR]
#                                  [--layouts noise,dense] [--interleave file|line] [--runs N]
#                                  [--rg-arg ARG]... [--efm EFM]... [--efm-name NAME]
#   SIZE_MIB      size of the log in MiB (default 500); --sizes runs several sizes in one go
#   --parser      the parser to bench (default clippy): `refine-loop parse -p NAME`, and the
#                 `regex` of the [[pattern]] and [[summary]] entries of gate-parsers/NAME.toml for rg
#   --fixtures    the folder of real tool output (default tests/fixtures/parsers/NAME); its *.txt
#                 files but TOOLS.txt
#   --layouts     which logs to make (default both): noise = 90% build-log noise lines, 10%
#                 fixture lines; dense = the fixture files repeated, no noise at all
#   --interleave  (noise layout) file (default): each fixture file stays whole (multi-line formats
#                 stay intact) after 9 noise lines per line of it; line: 9 noise lines before every
#                 fixture line
#   --runs        runs per program, layout and size; the table shows the lowest CPU and wall times
#                 and the highest RSS
#   --rg-arg      one more argument for rg, repeatable (e.g. --rg-arg=--no-mmap: without it, the
#                 pages of the memory-mapped log count in rg's RSS)
#   --efm, --efm-name  errorformat's format (repeatable) or one of its named formats; the default
#                 depends on the parser and fixtures (below)
#
# The noise log: 90% build-log noise (Compiling lines, timestamped lines, progress lines with \r,
# make percentages, ANSI colours), generated deterministically, 10% fixture lines; a ~10 MiB block
# repeated up to the size. The dense log: the fixture files one after the other, repeated up to
# ~10 MiB, that block repeated up to the size. Every program reads the same log, warm in the page
# cache.
# Timed by bench/timed.py (wait4's rusage, to the microsecond): CPU time (user + sys), wall clock
# and peak RSS of
#   refine-loop parse -p NAME --format summary LOG   (stdout to a file, read for the summary line)
#   rg -c -e PAT... LOG                              (rg's default: the file memory-mapped)
#   errorformat EFM... <LOG                          (one short line per entry, to a file)
# rg counts the lines of the parser's [[pattern]]/[[summary]] shapes (not its continuation lines:
# rg has no notion of an entry). "rl/rg cpu" is the bar; "ef/rl wall" is how much slower
# errorformat is. Each log is also read by `refine-loop parse -p auto` (which ranks every parser
# on a sample, then reads the log with the one it chose): "auto/rl cpu" is its cost over the named
# parser's, and "auto chose" the parser it named.
#
# errorformat (https://github.com/reviewdog/errorformat, Go) is the second reference: the binary
# named by $ERRORFORMAT, else one built by bench/build-errorformat.sh from $ERRORFORMAT_SRC (a
# folder with the errorformat, go-checkstyle and go-sarif checkouts), else its columns show "-"
# with a note. Its format, unless --efm/--efm-name: for clippy's short format, errorformat's own
# `-name=clippy` (`%f:%l:%c: %m`); for clippy's human format (fixtures in a folder named
# clippy-human) a multi-line set after Vim's rustc compiler file (errorformat ships none):
#   %-G%\s%#Checking %.%#  %-Gerror: could not compile %.%#  %Eerror[E%n]: %m  %Eerror: %m
#   %Wwarning: %m  %C %#--> %f:%l:%c  %Z  %C%.%#
# (an entry starts at error:/warning:, takes its place from the --> line, ends at a blank line);
# for eslint, errorformat's own `-name=eslint`. Other parsers: --efm, or no errorformat column.
# Needs: cargo, python3 >= 3.11 (tomllib), rg. Temp files go under
# $TMPDIR (default /tmp) and are deleted on exit.
set -euo pipefail

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

sizes=500 parser=clippy fixtures='' interleave=file runs=1 rg_extra=() layouts=noise,dense
efm=() efm_name=''
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
    --layouts) layouts=$2; shift 2 ;;
    --layouts=*) layouts=${1#*=}; shift ;;
    --efm) efm+=("$2"); shift 2 ;;
    --efm=*) efm+=("${1#*=}"); shift ;;
    --efm-name) efm_name=$2; shift 2 ;;
    --efm-name=*) efm_name=${1#*=}; shift ;;
    -h | --help) usage; exit 0 ;;
    [0-9]*) sizes=$1; shift ;;
    *) echo "parse-throughput: unknown argument: $1" >&2; usage >&2; exit 2 ;;
  esac
done
[[ $sizes =~ ^[0-9]+(,[0-9]+)*$ ]] || { echo "parse-throughput: bad size list: $sizes" >&2; exit 2; }
[[ $interleave == file || $interleave == line ]] || { echo "parse-throughput: --interleave file|line" >&2; exit 2; }
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "parse-throughput: --runs N (N >= 1)" >&2; exit 2; }
[[ $layouts =~ ^(noise|dense)(,(noise|dense))*$ ]] || { echo "parse-throughput: --layouts noise,dense" >&2; exit 2; }

root=$(cd "$(dirname "$0")/.." && pwd)
fixtures=${fixtures:-$root/tests/fixtures/parsers/$parser}
definition=$root/gate-parsers/$parser.toml
for tool in cargo python3 rg; do
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

# 1b. errorformat, the second reference: $ERRORFORMAT, else built from $ERRORFORMAT_SRC.
ef_bin='' ef_args=() ef_note=''
if [[ -n ${ERRORFORMAT:-} ]]; then
  [[ -x $ERRORFORMAT ]] || { echo "parse-throughput: ERRORFORMAT=$ERRORFORMAT is not executable" >&2; exit 2; }
  ef_bin=$ERRORFORMAT
elif [[ -n ${ERRORFORMAT_SRC:-} ]]; then
  echo "building errorformat from $ERRORFORMAT_SRC" >&2
  "$root/bench/build-errorformat.sh" "$ERRORFORMAT_SRC" "$work/errorformat"
  ef_bin=$work/errorformat
else
  ef_note="not run: set ERRORFORMAT (a built errorformat binary) or ERRORFORMAT_SRC (checkouts to build it from, see bench/build-errorformat.sh)"
fi
if [[ -n $ef_bin ]]; then
  if ((${#efm[@]})); then
    ef_args=("${efm[@]}")
  elif [[ -n $efm_name ]]; then
    ef_args=(-name="$efm_name")
  elif [[ $parser == clippy && $(basename "$fixtures") == clippy-human ]]; then
    # After Vim's rustc compiler file; errorformat ships no format for the human output.
    ef_args=('%-G%\s%#Checking %.%#' '%-Gerror: could not compile %.%#' '%Eerror[E%n]: %m'
      '%Eerror: %m' '%Wwarning: %m' '%C %#--> %f:%l:%c' '%Z' '%C%.%#')
  elif [[ $parser == clippy || $parser == eslint ]]; then
    ef_args=(-name="$parser")
  fi
  if ((${#ef_args[@]})); then
    ef_note="$ef_bin ${ef_args[*]}"
  else
    ef_bin='' ef_note="not run: no errorformat format for parser $parser (give --efm or --efm-name)"
  fi
fi
echo "errorformat: $ef_note" >&2

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

# 2. The ~10 MiB blocks: noise = 9 noise lines per fixture line, whole rounds over the fixtures;
# dense = whole rounds over the fixtures, nothing else.
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
for layout, noisy in (("noise", 9), ("dense", 0)):
    block, size, i = [], 0, 0
    while size < 10 << 20:
        for unit in units:
            for _ in range(noisy * len(unit)):
                line = noise(i); i += 1
                block.append(line); size += len(line)
            block += unit; size += sum(map(len, unit))
    with open(f"{out}.{layout}", "wb") as f:
        f.writelines(block)
PY
best() { # best FILE CPU WALL RSS_KB: keeps the lowest times and the highest RSS
  local c=$2 t=$3 rss=$4
  if [[ -s $1 ]]; then
    read -r old_c old_t old_rss <"$1"
    c=$(awk -v a="$c" -v b="$old_c" 'BEGIN {print (a < b ? a : b)}')
    t=$(awk -v a="$t" -v b="$old_t" 'BEGIN {print (a < b ? a : b)}')
    ((old_rss > rss)) && rss=$old_rss
  fi
  echo "$c $t $rss" >"$1"
}
timed() { # timed NAME CMD...: runs CMD under bench/timed.py, stdout to $work/NAME.out; keeps the best
  local name=$1 status=0 c t rss
  shift
  "$root/bench/timed.py" "$work/$name.time" "$@" >"$work/$name.out" 2>"$work/$name.err" || status=$?
  read -r c t rss <"$work/$name.time"
  best "$work/$name.best" "$c" "$t" "$rss"
  return "$status"
}

rows=$work/rows.tsv
: >"$rows"
IFS=, read -r -a size_list <<<"$sizes"
IFS=, read -r -a layout_list <<<"$layouts"
for layout in "${layout_list[@]}"; do
  block=$work/block.$layout
  block_bytes=$(stat -c %s "$block")
  for size in "${size_list[@]}"; do
    copies=$(((size * 1048576 + block_bytes - 1) / block_bytes))
    log=$work/log.txt
    for ((c = 0; c < copies; c++)); do cat "$block"; done >"$log"
    log_bytes=$(stat -c %s "$log")
    cat "$log" >/dev/null # warm in the page cache for every program
    rm -f "$work"/*.best
    rl_summary=- rg_count=- ef_count=-
    for ((run = 0; run < runs; run++)); do
      # 3b. refine-loop
      if ! timed rl "$bin" parse -p "$parser" --format summary "$log"; then
        echo "refine-loop parse failed:" >&2; cat "$work/rl.err" "$work/rl.time" >&2; exit 1
      fi
      rl_summary=$(tail -n 1 "$work/rl.out")
      # 3b'. refine-loop with --parser auto: the choice (ranked on a sample), then the same read
      if ! timed au "$bin" parse -p auto --format summary "$log"; then
        echo "refine-loop parse -p auto failed:" >&2; cat "$work/au.err" "$work/au.time" >&2; exit 1
      fi
      au_choice=$(head -n 1 "$work/au.out" | sed -n 's/^auto: chose parser "\([^"]*\)".*/\1/p')
      # 3c. ripgrep
      if ((${#rg_args[@]})); then
        status=0
        timed rg rg -c ${rg_extra[@]+"${rg_extra[@]}"} "${rg_args[@]}" "$log" || status=$?
        ((status <= 1)) || { echo "rg failed:" >&2; cat "$work/rg.err" >&2; exit 1; }
        rg_count=$(cat "$work/rg.out"); rg_count=${rg_count:-0}
      fi
      # 3d. errorformat: one short line per valid entry (an empty line for the others)
      if [[ -n $ef_bin ]]; then
        if ! timed ef "$ef_bin" -f '{{if .Valid}}{{.Filename}}:{{.Lnum}}:{{.Col}}{{end}}' \
          "${ef_args[@]}" <"$log"; then
          echo "errorformat failed:" >&2; cat "$work/ef.err" >&2; exit 1
        fi
        ef_count=$(grep -c . "$work/ef.out" || true)
        rm -f "$work/ef.out"
      fi
    done
    read -r rl_c rl_s rl_rss <"$work/rl.best"
    read -r au_c au_s au_rss <"$work/au.best"
    if [[ -s $work/rg.best ]]; then read -r rg_c rg_s rg_rss <"$work/rg.best"; else rg_c=- rg_s=- rg_rss=-; fi
    if [[ -s $work/ef.best ]]; then read -r ef_c ef_s ef_rss <"$work/ef.best"; else ef_c=- ef_s=- ef_rss=-; fi
    printf '%s\t' "$layout" "$log_bytes" "$rl_c" "$rl_s" "$rl_rss" "$rg_c" "$rg_s" "$rg_rss" \
      "$ef_c" "$ef_s" "$ef_rss" "$rl_summary" "$rg_count" "$ef_count" "$au_c" "$au_s" \
      "${au_choice:-?}" >>"$rows"
    echo >>"$rows"
    rm -f "$log"
  done
done

# 4. One table.
python3 - "$rows" "$parser" "$fixtures" "$interleave" "$runs" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)" "${rg_extra[*]-}" "$ef_note" <<'PY'
import re, sys
rows, parser, fixtures, interleave, runs, cores, load, rg_extra, ef_note = sys.argv[1:]
MiB = 1 << 20
print(f"parser {parser} on {fixtures}: noise = 90% noise lines (fixtures interleaved by "
      f"{interleave}), dense = the fixtures repeated; best of {runs} run(s); {cores} cores, "
      f"load {load}" + (f"; rg {rg_extra}" if rg_extra else ""))
print(f"errorformat: {ef_note}")
head = ("layout", "log MiB", "rl cpu s", "rl wall s", "rl MiB/s", "rl RSS MiB", "rg cpu s",
        "rg wall s", "rg RSS MiB", "rl/rg cpu", "rl/rg wall", "ef cpu s", "ef wall s",
        "ef RSS MiB", "ef/rl wall", "rl findings", "rg lines", "ef entries", "auto cpu s",
        "auto/rl cpu", "auto/rl wall", "auto chose")
table, summaries = [head], []
num = lambda s: float(s) if s not in ("-", "") else None
ratio = lambda a, b: f"{num(a) / num(b):.1f}x" if num(a) is not None and num(b) else "-"
ratio2 = lambda a, b: f"{num(a) / num(b):.2f}x" if num(a) is not None and num(b) else "-"
mib_of = lambda kb: f"{int(kb) / 1024:.1f}" if kb != "-" else "-"
for line in open(rows):
    (layout, size, rl_c, rl_s, rl_rss, rg_c, rg_s, rg_rss, ef_c, ef_s, ef_rss, summary, rg_count,
     ef_count, au_c, au_s, au_choice) = line.rstrip("\n").split("\t")[:17]
    mib = int(size) / MiB
    m = re.search(r": (\d+) errors, (\d+) warnings, (\d+) notes", summary)
    found = str(sum(map(int, m.groups()))) if m else "?"
    rate = f"{mib / num(rl_s):.0f}" if num(rl_s) else "-"
    table.append((layout, f"{mib:.0f}", rl_c, rl_s, rate, mib_of(rl_rss), rg_c, rg_s,
                  mib_of(rg_rss), ratio(rl_c, rg_c), ratio(rl_s, rg_s), ef_c, ef_s,
                  mib_of(ef_rss), ratio(ef_s, rl_s), found, rg_count, ef_count, au_c,
                  ratio2(au_c, rl_c), ratio2(au_s, rl_s), au_choice))
    summaries.append(f"  {layout} {mib:.0f} MiB: {summary}")
widths = [max(len(r[i]) for r in table) for i in range(len(head))]
for r in table:
    print("  ".join(c.rjust(w) for c, w in zip(r, widths)))
print("refine-loop's summary lines (rl findings = errors + warnings + notes; rg lines = lines "
      "matching any pattern; ef entries = errorformat's valid entries):")
print("\n".join(summaries))
PY
