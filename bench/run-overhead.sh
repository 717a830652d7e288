#!/usr/bin/env bash
# The run loop's own work per cycle (all but running the gate and the delegates, as trend.json's
# overhead_ms records it) beside `git status --porcelain`, on repositories of FILES files each
# (built once per size, in a temporary directory removed at the end). Each run is CYCLES cycles
# of `refine-loop run` whose gate and delegate are a grep and a sed, each accepting one fix;
# ROUNDS rounds, the sizes interleaved within each. Beside overhead_ms it times each cycle from
# the line the loop prints when it ends to the next (less gate_ms and delegate_ms where
# trend.json has them), so that work the record leaves out shows. Prints medians per size and a
# markdown table (bench/run_overhead.py does the measuring). With --touch N the delegate also
# changes N real-sized modules each cycle, and the table shows the gate-integrity check's part
# of the overhead (integrity_ms, which trend.json records).
# Usage: bench/run-overhead.sh [--files 1000,20000,100000] [--cycles 10] [--rounds 5] [--touch 0]
#        (from anywhere in this repository)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cargo build --release --quiet --manifest-path "$root/Cargo.toml"
exec python3 "$root/bench/run_overhead.py" --bin "$root/target/release/refine-loop" "$@"
