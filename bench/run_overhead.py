"""The run loop's own work per cycle beside `git status --porcelain`, on repositories of a few
sizes. `bench/run-overhead.sh` builds the release binary and runs this; see its header."""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

# Every delegate turn removes one FIXME from src/m000 and the gate then fails one finding
# fewer, so each cycle accepts exactly one change. There are more FIXMEs (12) than cycles (at
# most 10), so the gate never passes and every run ends on its cycle budget.
FIXMES = 12
CONFIG = """\
[[gate.check]]
name = "lint"
category = "lint"
run = "grep -Hn FIXME src/m000/*.rs | awk -F: '{print $1\\":\\"$2\\":1: error: fixme\\"}'; ! grep -q FIXME src/m000/*.rs"
parser = "gcc"

[[delegate]]
categories = ["lint"]
run = "f=$(grep -l FIXME src/m000/*.rs | head -1); sed -i '0,/FIXME/{/FIXME/d}' \\"$f\\"{touch}"
"""
# With --touch N, the delegate also changes N more files each cycle (a line appended to each):
# a change of N files, every one read by the integrity check on both sides. They are written as
# real modules (functions, a test module with assertions, comments), in the folders
# after src/m000 (~1.5 KiB each), so that the check has real work on each.
TOUCH = "; git ls-files 'src/m*/*.rs' | grep -v '^src/m000/' | head -n {count} | " \
    "xargs sh -c 'for g; do echo \\\"// touched $$\\\" >> \\\"$g\\\"; done' _"


def module(i):
    """A real-sized Rust module: a few functions, comments, and a test module."""
    body = [f"//! Module {i}: arithmetic on prices, for the benchmark.", ""]
    for k in range(6):
        body += [f"/// Adds {k} to a price, saturating.",
                 f"pub fn add_{k}(price: u32) -> u32 {{",
                 f"    price.saturating_add({k}) // the {k}th rule",
                 "}", ""]
    body += ["#[cfg(test)]", "mod tests {", "    use super::*;", ""]
    for k in range(6):
        body += ["    #[test]", f"    fn adds_{k}() {{",
                 f"        assert_eq!(add_{k}(1), {k + 1});",
                 f"        assert!(add_{k}(u32::MAX) == u32::MAX);", "    }", ""]
    body.append("}")
    return "\n".join(body) + "\n"
BUDGET_EXIT = 3  # exit_code::BUDGET: the cycle budget ran out, as expected here
CYCLE_LINE = b"refine-loop cycle "
STATUS_RUNS = 3  # `git status` timings before and after each run


def git(repo, *args):
    # gc.auto=0: a background auto-gc started by one command would still be running, and
    # competing for the disk, while the next is timed.
    subprocess.run(["git", "-c", "gc.auto=0", *args], cwd=repo, check=True,
                   stdout=subprocess.DEVNULL)


def make_repo(repo, files, touch):
    """FILES one-line files, 100 to a folder, and the FIXMEs the delegate removes; the TOUCH
    files after src/m000 that the delegate also changes are real-sized modules; committed."""
    os.makedirs(repo)
    git(repo, "init", "-q")
    git(repo, "config", "gc.auto", "0")
    for i in range(files):
        folder = os.path.join(repo, f"src/m{i // 100:03d}")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"f{i % 100:02d}.rs"), "w") as f:
            touched = 100 <= i < 100 + touch
            f.write(module(i) if touched else f"pub fn f{i}() -> u32 {{ {i} }}\n")
    for i in range(FIXMES):
        with open(os.path.join(repo, f"src/m000/f{i:02d}.rs"), "a") as f:
            f.write(f"// FIXME {i}\n")
    with open(os.path.join(repo, "refine-loop.toml"), "w") as f:
        f.write(CONFIG.replace("{touch}", TOUCH.format(count=touch) if touch else ""))
    with open(os.path.join(repo, ".gitignore"), "w") as f:
        f.write("/.refine-loop\n")
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=b", "-c", "user.email=b@example.invalid", "commit", "-qm", "files")


def reset(repo):
    """Back to the commit: the accepted changes, the state dir and the run's refs all gone."""
    git(repo, "checkout", "-q", "--", ".")
    # -x: the state dir is ignored, so plain `clean` would keep it; refine-loop.toml is
    # committed, so nothing of the set-up is removed.
    git(repo, "clean", "-fdxq")
    subprocess.run(["rm", "-rf", os.path.join(repo, ".git", "refine-loop")], check=True)
    refs = subprocess.run(["git", "for-each-ref", "--format=%(refname)", "refs/refine-loop"],
                          cwd=repo, check=True, capture_output=True, text=True).stdout.split()
    for ref in refs:
        git(repo, "update-ref", "-d", ref)


def status_times(repo):
    times = []
    for _ in range(STATUS_RUNS):
        start = time.perf_counter()
        git(repo, "status", "--porcelain")
        times.append(ms(time.perf_counter() - start))
    return times


def timed_run(binary, repo, cycles):
    """Runs the loop; returns when each cycle's line reached stderr, start and end included
    (perf_counter seconds), and the peak RSS in KiB. Every output file stays outside `repo`:
    the loop puts back untracked files a cycle changes, so a log written into the tree would
    be lost."""
    # --ci none: on a CI runner the loop would otherwise also print workflow commands.
    argv = [binary, "run", "--ci", "none", "--max-cycles", str(cycles)]
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=repo, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    lines, stderr = [], []
    for line in proc.stderr:  # each line as it arrives: the loop prints it when a cycle ends
        now = time.perf_counter()
        stderr.append(line)
        if line.startswith(CYCLE_LINE):
            lines.append(now)
    # wait4 rather than proc.wait(): it also gives the process's resource usage.
    _, status, usage = os.wait4(proc.pid, 0)
    end = time.perf_counter()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != BUDGET_EXIT or len(lines) != cycles:
        sys.stderr.write(b"".join(stderr).decode(errors="replace"))
        sys.exit(f"run-overhead: {repo}: exit {proc.returncode} (expected {BUDGET_EXIT}), "
                 f"{len(lines)} cycle lines (expected {cycles})")
    return start, lines, end, usage.ru_maxrss


def read_trend(repo, cycles):
    """The cycles of trend.json but the baseline, once it is clear each accepted one fix."""
    with open(os.path.join(repo, ".refine-loop", "trend.json")) as f:
        recorded = json.load(f)["cycles"][1:]
    # One finding fewer each cycle: 11, 10, ...
    expected = list(range(FIXMES - 1, FIXMES - 1 - cycles, -1))
    fixed = [c["failed_count"] for c in recorded] == expected
    if len(recorded) != cycles or not fixed or not all(c.get("accepted") for c in recorded):
        sys.exit(f"run-overhead: {repo}: the cycles did not each accept one fix: {recorded}")
    return recorded


def ms(seconds):
    return seconds * 1000


def median(values):
    return statistics.median(values) if values else None


def shown(value, unit=""):
    return "n/a" if value is None else f"{value:.0f}{unit}"


class Size:
    """Everything measured on one repository, over all rounds."""

    def __init__(self, files):
        self.files = files
        self.status = []  # ms, before and after each run
        self.overhead = []  # overhead_ms of cycles 1..N
        self.wall = []  # ms between the lines of cycles k-1 and k, k >= 2
        self.unaccounted = []  # that wall time less gate_ms and delegate_ms, when recorded
        self.before_first = []  # ms from the start to cycle 1's line (the baseline gate too)
        self.after_last = []  # ms from the last cycle's line to the exit (the report)
        self.peak_kib = 0
        self.integrity = []  # integrity_ms of cycles 1..N (a part of overhead_ms)

    def measure(self, binary, repo, cycles):
        reset(repo)
        self.status += status_times(repo)
        start, lines, end, peak_kib = timed_run(binary, repo, cycles)
        self.status += status_times(repo)
        self.peak_kib = max(self.peak_kib, peak_kib)
        self.before_first.append(ms(lines[0] - start))
        self.after_last.append(ms(end - lines[-1]))
        recorded = read_trend(repo, cycles)
        self.overhead += [c["overhead_ms"] for c in recorded if "overhead_ms" in c]
        self.integrity += [c["integrity_ms"] for c in recorded if "integrity_ms" in c]
        # Cycle 1 has no line before it: what precedes its line includes the start-up and the
        # baseline gate, so it is left out of the wall figures.
        for k in range(2, cycles + 1):
            wall = ms(lines[k - 1] - lines[k - 2])
            self.wall.append(wall)
            cycle = recorded[k - 1]
            if "gate_ms" in cycle and "delegate_ms" in cycle:
                self.unaccounted.append(wall - cycle["gate_ms"] - cycle["delegate_ms"])

    def summary(self):
        git_ms, overhead_ms = median(self.status), median(self.overhead)
        ratio = overhead_ms / git_ms if overhead_ms is not None and git_ms else None
        integrity_ms = median(self.integrity)
        share = integrity_ms / overhead_ms if integrity_ms is not None and overhead_ms else None
        return {
            "files": f"{self.files:,}",
            "git status (ms)": shown(git_ms),
            "overhead_ms / cycle": shown(overhead_ms),
            "overhead / git status": "n/a" if ratio is None else f"{ratio:.2f}x",
            "integrity_ms / cycle": shown(integrity_ms),
            "integrity / overhead": "n/a" if share is None else f"{share:.0%}",
            "wall / cycle (ms)": shown(median(self.wall)),
            "wall - gate - delegate (ms)": shown(median(self.unaccounted)),
            "peak RSS (MiB)": f"{self.peak_kib / 1024:.0f}",
        }

    def report(self):
        row = self.summary()
        print(f"files {self.files}:")
        print(f"  git status --porcelain: median {row['git status (ms)']} ms "
              f"(min {min(self.status):.0f}, max {max(self.status):.0f}; {len(self.status)} runs)")
        print(f"  overhead_ms per cycle: median {row['overhead_ms / cycle']} "
              f"({len(self.overhead)} cycles; all: {self.overhead})")
        print(f"  overhead / git status: {row['overhead / git status']}")
        print(f"  integrity_ms per cycle (part of overhead_ms): median "
              f"{row['integrity_ms / cycle']} ({row['integrity / overhead']} of it; "
              f"all: {self.integrity})")
        print(f"  wall per cycle (line to line, cycles 2..N): "
              f"median {shown(median(self.wall), ' ms')}; "
              f"less gate_ms and delegate_ms: median {shown(median(self.unaccounted), ' ms')}")
        print(f"  before cycle 1's line: median {shown(median(self.before_first), ' ms')}; "
              f"after the last cycle's line: median {shown(median(self.after_last), ' ms')}")
        print(f"  peak RSS: {row['peak RSS (MiB)']} MiB (max over rounds)")
        print("  | " + " | ".join(row.values()) + " |")


def progress(began, what):
    """Where the bench is, on stderr, so that it stays out of the results."""
    elapsed = time.perf_counter() - began
    print(f"run-overhead: {what} ({elapsed:.0f} s)", file=sys.stderr, flush=True)


def machine(root):
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                if line.startswith("model name")), "unknown CPU")
    commit = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=root,
                            capture_output=True, text=True).stdout.strip() or "unknown"
    return (f"machine: {len(os.sched_getaffinity(0))} cores (nproc), {cpu}, "
            f"kernel {platform.release()}; refine-loop at {commit}")


def main():
    parser = argparse.ArgumentParser(prog="bench/run-overhead.sh")
    parser.add_argument("--files", default="1000,20000,100000",
                        help="repository sizes, comma-separated (default 1000,20000,100000)")
    parser.add_argument("--cycles", type=int, default=10, help="cycles per run (default 10)")
    parser.add_argument("--rounds", type=int, default=5, help="runs per size (default 5)")
    parser.add_argument("--touch", type=int, default=0,
                        help="files (real-sized modules) the delegate also changes each cycle "
                             "(default 0): the integrity check reads each, on both sides")
    parser.add_argument("--bin", required=True, help=argparse.SUPPRESS)
    args = parser.parse_args()
    sizes = [Size(int(n)) for n in args.files.split(",")]
    if any(args.touch > size.files - 100 for size in sizes):
        parser.error("--touch must leave out the 100 files of src/m000: at most FILES - 100")
    if not 2 <= args.cycles <= FIXMES - 1:
        parser.error(f"--cycles must be 2 to {FIXMES - 1} (at least two for a line-to-line time)")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    print(machine(root), flush=True)
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="run-overhead.") as work:
        repos = {size.files: os.path.join(work, str(size.files)) for size in sizes}
        for size in sizes:
            make_repo(repos[size.files], size.files, args.touch)
        # Freshly written files stat slower until they are written back; every run starts
        # with them settled.
        subprocess.run(["sync"], check=True)
        progress(began, "repositories made")
        for round_ in range(args.rounds):
            # Sizes alternate within a round, and the order flips each round, so that a drift
            # of the machine's speed does not fall on one size.
            order = sizes if round_ % 2 == 0 else sizes[::-1]
            for size in order:
                size.measure(args.bin, repos[size.files], args.cycles)
            progress(began, f"round {round_ + 1}/{args.rounds} done")
    progress(began, "done, temporary repositories removed")
    touched = f", the delegate changing {args.touch} more files each cycle" if args.touch else ""
    print(f"{args.cycles} cycles a run, {args.rounds} rounds{touched}")
    for size in sizes:
        size.report()
    header = list(sizes[0].summary())
    print()
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---:" for _ in header) + "|")
    for size in sizes:
        print("| " + " | ".join(size.summary().values()) + " |")


if __name__ == "__main__":
    main()
