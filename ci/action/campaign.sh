#!/usr/bin/env bash
# The action's campaign step, run when the `campaign` input names one: where the campaign's state
# dir is and the prefix of its cache keys, written to $GITHUB_OUTPUT for the steps that restore
# the state dir before the run and save it after. Those steps run outside refine-loop, so the
# folder is decided here, and the run step passes this same folder to refine-loop.
#
# The state dir: the `state-dir` input, else .refine-loop in the target, as given (a relative
# path is relative to the workspace, for the cache as for refine-loop).
#
# The key prefix: refine-loop-campaign-<repository>-<branch>-<campaign>-<hash>-, each name reduced
# to safe characters (a cache key holds no comma) and the hash taken of the three names as given,
# so that no campaign's prefix is the start of another's (`nightly` and `nightly-2`, or branch
# `a` with campaign `b-c` and branch `a-b` with campaign `c`). The save step appends the run's id
# and attempt, since a cache entry is never overwritten; the restore step falls back to the newest
# entry under the prefix.
set -euo pipefail

campaign=${INPUT_CAMPAIGN:?the campaign input is empty}
repository=${REFINE_LOOP_REPOSITORY:-}
branch=${REFINE_LOOP_BRANCH:-}

state_dir=${INPUT_STATE_DIR:-}
if [[ -z $state_dir ]]; then
  target=${INPUT_TARGET:-.}
  state_dir=${target%/}/.refine-loop
fi

# A short, safe name for the key: at most 64 characters of [A-Za-z0-9._-].
safe() { printf '%s' "$1" | tr -c 'A-Za-z0-9._-' '-' | cut -c1-64; }
hash=$(printf '%s\0%s\0%s' "$repository" "$branch" "$campaign" |
  { sha256sum 2>/dev/null || shasum -a 256; } | cut -c1-12)
prefix="refine-loop-campaign-$(safe "$repository")-$(safe "$branch")-$(safe "$campaign")-$hash-"

# The state dir is one line, as an output must be.
if [[ $state_dir == *$'\n'* ]]; then
  echo "refine-loop: the state-dir input holds a line break" >&2
  exit 2
fi
# What the cache keeps: the campaign's own files and its history, not each night's cycle folders
# and reports (those are the night's artifact), so that the entry does not grow night after night.
{
  echo "state-dir=$state_dir"
  echo "key-prefix=$prefix"
  echo "cache-paths<<REFINE_LOOP_PATHS"
  for name in REFINE-GOAL.md REFINE-BACKLOG.md REFINE-WORKLOG.md history set-aside heuristics.json sweep.json; do
    echo "${state_dir%/}/$name"
  done
  echo "REFINE_LOOP_PATHS"
} >>"${GITHUB_OUTPUT:-/dev/stdout}"
