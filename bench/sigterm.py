"""How long `refine-loop run` takes to end after SIGTERM, wherever in the run the signal falls.

On a repository of FILES one-line files (bench/run_overhead.py builds it), each try starts a run
of CYCLES cycles whose delegate removes one FIXME (a sed, then a short sleep so that some signals
fall while it runs) and sends SIGTERM after a delay drawn across the run's length (measured first
by an uninterrupted run): in the baseline gate, a delegate, the looks at the tree, a rollback, the
reports. It prints the latency from the signal to the process's exit (median, 90th percentile,
max), the exit codes seen, and then `refine-loop recover`'s verdict that nothing was left to put
back. Usage: python3 bench/sigterm.py --bin target/release/refine-loop [--files 100000]
[--tries 30] [--cycles 6].
"""

import argparse
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
import run_overhead  # noqa: E402  (its repository and reset)


def run_once(binary, repo, cycles, delay):
    """Starts a run, sends SIGTERM after `delay` seconds (None: never); returns the latency from
    the signal to the exit (or the run's length), and its exit code."""
    started = time.monotonic()
    process = subprocess.Popen([binary, "run", "--max-cycles", str(cycles)], cwd=repo,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if delay is None:
        code = process.wait()
        return time.monotonic() - started, code
    try:
        process.wait(timeout=delay)
        return None, process.returncode
    except subprocess.TimeoutExpired:
        pass
    sent = time.monotonic()
    process.send_signal(signal.SIGTERM)
    code = process.wait()
    return time.monotonic() - sent, code


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--tries", type=int, default=30)
    parser.add_argument("--cycles", type=int, default=6)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    args.bin = os.path.abspath(args.bin)
    work = tempfile.mkdtemp(prefix="refine-loop-sigterm-")
    try:
        repo = os.path.join(work, "repo")
        run_overhead.make_repo(repo, args.files, 0)
        with open(os.path.join(repo, "refine-loop.toml")) as f:
            config = f.read()
        # A delegate that also takes a moment, so that signals fall inside delegates too.
        with open(os.path.join(repo, "refine-loop.toml"), "w") as f:
            f.write(config.replace("run = \"f=$(grep", "run = \"sleep 0.3; f=$(grep", 1))
        length, _ = run_once(args.bin, repo, args.cycles, None)
        run_overhead.reset(repo)
        rng = random.Random(args.seed)
        latencies, codes = [], {}
        for _ in range(args.tries):
            latency, code = run_once(args.bin, repo, args.cycles, rng.uniform(0.05, length))
            codes[code] = codes.get(code, 0) + 1
            if latency is not None:
                latencies.append(latency)
            left = subprocess.run([args.bin, "recover"], cwd=repo, capture_output=True,
                                  text=True)
            if left.returncode != 0:
                print(f"recover failed: {left.stdout}{left.stderr}")
            run_overhead.reset(repo)
        latencies.sort()
        print(f"files {args.files}, a run of {args.cycles} cycles: {length:.2f} s uninterrupted")
        print(f"SIGTERM to exit over {len(latencies)} signals: median "
              f"{statistics.median(latencies) * 1000:.0f} ms, p90 "
              f"{latencies[int(len(latencies) * 0.9) - 1] * 1000:.0f} ms, max "
              f"{latencies[-1] * 1000:.0f} ms; exit codes {dict(sorted(codes.items()))}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
