#!/usr/bin/env python3
"""Runs a command and writes its CPU time, wall time and peak RSS, finely.

Usage: bench/timed.py RESULT_FILE COMMAND [ARG]...
The command inherits stdin, stdout and stderr. RESULT_FILE gets one line:
"CPU_SECONDS WALL_SECONDS PEAK_RSS_KIB", CPU being user + sys of the command and its children
(from wait4's rusage, to the microsecond: GNU time prints them to the hundredth, which is a
sixth of a 60 ms run), wall from just before the fork to the reaping. The exit status is the
command's (128 + N when killed by signal N).
"""
import os
import sys
import time


def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    result, command = sys.argv[1], sys.argv[2:]
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        try:
            os.execvp(command[0], command)
        except OSError as error:
            print(f"timed.py: {command[0]}: {error.strerror}", file=sys.stderr)
        os._exit(127)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    with open(result, "w", encoding="utf-8") as out:
        out.write(f"{usage.ru_utime + usage.ru_stime:.4f} {wall:.4f} {usage.ru_maxrss}\n")
    return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


if __name__ == "__main__":
    sys.exit(main())
