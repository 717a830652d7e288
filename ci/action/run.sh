#!/usr/bin/env bash
# The action's run step. Inputs arrive as INPUT_* environment variables (never spliced into the
# script); argv is built from the non-empty ones only. refine-loop itself writes the outcome
# outputs (the state dir too), the step summary and the annotations; this script adds a
# unique artifact name, and first writes every output empty (the state dir as the inputs name it),
# so that an ending where refine-loop writes none (an input refused here, a usage or config
# error, exit 2) still has all of them, as the docs say: refine-loop's own, written later, take
# their place. Then it becomes refine-loop (exec), whose exit code is the step's.
set -uo pipefail

# Every output, empty, before anything can end the step; the state dir as the inputs name it
# (refine-loop's, as its config resolves it, replaces it).
if [[ -n ${GITHUB_OUTPUT:-} ]]; then
  state_dir=${INPUT_STATE_DIR:-${REFINE_LOOP_STATE_DIR:-${INPUT_TARGET:-.}/.refine-loop}}
  state_dir=${state_dir//$'\n'/}
  {
    for output in outcome stop-reason failed-before failed-after cycles patch-path report-path sarif-path artifact-name tokens cost; do
      printf '%s=\n' "$output"
    done
    printf 'state-dir=%s\n' "$state_dir"
  } >>"$GITHUB_OUTPUT"
fi

bin=${REFINE_LOOP_BIN:-refine-loop}
args=(run --ci github)
[[ -n ${INPUT_TARGET:-} ]] && args+=(--target "$INPUT_TARGET")
[[ -n ${INPUT_CONFIG:-} ]] && args+=(--config "$INPUT_CONFIG")
# The config's trust boundary: on a pull request, the tree's config is the pull request's own.
config=${INPUT_CONFIG:-${INPUT_TARGET:-.}/refine-loop.toml}
case ${INPUT_CONFIG_FROM:-} in
  '')
    if [[ -n ${GITHUB_BASE_REF:-} ]]; then
      printf '::warning::refine-loop reads its config from the pull request'"'"'s own tree: the pull request can change how it is judged (confinement, delegates, parsers). Set config-from: base to read the base branch'"'"'s.\n'
    fi
    ;;
  base)
    if [[ -z ${GITHUB_BASE_REF:-} ]]; then
      printf '::notice::config-from: base applies to pull requests; the config of the checked-out tree is used.\n'
    else
      base="refs/remotes/origin/$GITHUB_BASE_REF"
      # One commit into a shallow checkout; into a whole one, no depth (--depth would make it
      # shallow, and new-since could no longer find where the branches part).
      depth=()
      if [[ $(git -C "${INPUT_TARGET:-.}" rev-parse --is-shallow-repository 2>/dev/null) == true ]]; then
        depth=(--depth=1)
      fi
      # A whole checkout (fetch-depth: 0) holds the base already: no fetch, so none needs the
      # credentials a checkout with persist-credentials: false did not keep.
      if git -C "${INPUT_TARGET:-.}" rev-parse --verify --quiet "$base^{commit}" >/dev/null &&
        [[ ${#depth[@]} -eq 0 ]]; then
        :
      elif ! git -C "${INPUT_TARGET:-.}" fetch --quiet ${depth[@]+"${depth[@]}"} origin "+refs/heads/$GITHUB_BASE_REF:$base"; then
        printf 'refine-loop: could not fetch the base branch %q for config-from: base\n' "$GITHUB_BASE_REF" >&2
        exit 2
      fi
      args+=(--config-from-ref "$base")
      if ! git -C "${INPUT_TARGET:-.}" diff --quiet "$base" -- "$(realpath --relative-to="${INPUT_TARGET:-.}" "$config" 2>/dev/null || printf '%s' "$config")" 2>/dev/null; then
        printf '::warning::this pull request changes %s; the base branch'"'"'s config is used.\n' "$config"
      fi
    fi
    ;;
  *) args+=(--config-from-ref "$INPUT_CONFIG_FROM") ;;
esac
[[ -n ${INPUT_STATE_DIR:-} ]] && args+=(--state-dir "$INPUT_STATE_DIR")
[[ -n ${INPUT_PRESET:-} ]] && args+=(--preset "$INPUT_PRESET")
[[ -n ${INPUT_MAX_CYCLES:-} ]] && args+=(--max-cycles "$INPUT_MAX_CYCLES")
[[ -n ${INPUT_TIME_BUDGET:-} ]] && args+=(--time-budget "$INPUT_TIME_BUDGET")
[[ -n ${INPUT_VERIFY:-} ]] && args+=(--verify "$INPUT_VERIFY")
# exit-zero: "true" (or "findings") turns findings left and a spent budget into exit 0, not an
# ERROR (a tool missing, a crash) nor a cancellation; "all" turns every ending but a config
# error into 0.
case ${INPUT_EXIT_ZERO:-false} in
  true | findings) args+=(--exit-zero) ;;
  all) args+=(--exit-zero=all) ;;
  false | "") ;;
  *)
    printf 'refine-loop: the exit-zero input is true, findings, all or false, not %q\n' "$INPUT_EXIT_ZERO" >&2
    exit 2
    ;;
esac
# The scope: paths or globs, one per line or separated by spaces.
if [[ -n ${INPUT_SCOPE:-} ]]; then
  read -r -d '' -a scope <<<"$INPUT_SCOPE" || true
  for pattern in ${scope[@]+"${scope[@]}"}; do args+=(--scope "$pattern"); done
fi
[[ -n ${INPUT_PRIORITY:-} ]] && args+=(--priority "$INPUT_PRIORITY")
# new-since: empty is auto on a pull request's events (refine-loop finds the base from
# GITHUB_BASE_REF; a checkout without it is a full run) for the refactoring loop, and off on any
# other event or preset (a campaign works the whole tree); false or off is off; any other value
# is refine-loop's.
new_since=${INPUT_NEW_SINCE:-}
if [[ -z $new_since && ${INPUT_PRESET:-refactoring} == refactoring ]]; then
  case ${GITHUB_EVENT_NAME:-} in
    pull_request | pull_request_target) new_since=auto ;;
  esac
fi
case $new_since in
  '' | false | off) ;;
  *)
    args+=("--new-since=$new_since")
    # The base and the history back to it are needed: a shallow checkout has neither (auto
    # outside a pull request needs no base).
    if [[ $new_since != auto || -n ${GITHUB_BASE_REF:-} ]] &&
      [[ $(git -C "${INPUT_TARGET:-.}" rev-parse --is-shallow-repository 2>/dev/null) == true ]]; then
      printf '::warning::new-since needs the history back to the base, and this checkout is shallow: set fetch-depth: 0 on actions/checkout.\n'
    fi
    ;;
esac
# Extra flags, split on white space only: no quotes, globs or expansions are interpreted.
if [[ -n ${INPUT_ARGS:-} ]]; then
  read -r -d '' -a extra <<<"$INPUT_ARGS" || true
  args+=(${extra[@]+"${extra[@]}"})
fi
# A campaign's request, after the options: --continue or --continue=auto, then the intent as
# one word, whatever it starts with.
request=()
case ${INPUT_CONTINUE:-false} in
  true) request+=(--continue) ;;
  auto) request+=(--continue=auto) ;;
  false) ;;
  *)
    printf 'refine-loop: the continue input is true, false or auto, not %q\n' "$INPUT_CONTINUE" >&2
    exit 2
    ;;
esac
[[ -n ${INPUT_INTENT:-} ]] && request+=("$INPUT_INTENT")
((${#request[@]})) && args+=(-- "${request[@]}")

name=${INPUT_ARTIFACT_NAME:-}
attempt=
if [[ -z $name ]]; then
  # Unique per job and matrix leg: the job id and a short hash of the matrix values; the run
  # attempt last, so that a delivery after a re-run takes only its own attempt's records
  # (github-deliver.yml downloads refine-loop-*-<attempt>).
  leg=$(printf '%s' "${REFINE_LOOP_MATRIX:-null}" | { sha256sum 2>/dev/null || shasum -a 256; } | cut -c1-8)
  name="refine-loop-${REFINE_LOOP_JOB:-job}-${leg}"
  attempt=-${GITHUB_RUN_ATTEMPT:-1}
fi
# One line of safe characters, whatever the inputs held.
name=$(printf '%s' "$name" | tr -c 'A-Za-z0-9._-' '-')
attempt=$(printf '%s' "$attempt" | tr -c 'A-Za-z0-9._-' '-')
# Unique per step: a name this job already used (the action run twice in one job) gets -2, -3
# (before the attempt); upload-artifact refuses a name the workflow run already has (409
# Conflict). $RUNNER_TEMP is the job's own, emptied between jobs.
unique=$name$attempt
if [[ ${INPUT_UPLOAD_ARTIFACT:-true} == true ]]; then
  used=${RUNNER_TEMP:-/tmp}/refine-loop-artifact-names
  touch "$used"
  count=1
  while grep -qxF -- "$unique" "$used"; do
    count=$((count + 1))
    unique="$name-$count$attempt"
  done
  printf '%s\n' "$unique" >>"$used"
fi
name=$unique

# The artifact's name, for the upload step, only when there is one to upload.
if [[ -n ${GITHUB_OUTPUT:-} && ${INPUT_UPLOAD_ARTIFACT:-true} == true ]]; then
  printf 'artifact-name=%s\n' "$name" >>"$GITHUB_OUTPUT"
fi
# Only an artifact that will be uploaded is named in the summary.
if [[ ${INPUT_UPLOAD_ARTIFACT:-true} == true ]]; then
  export REFINE_LOOP_ARTIFACT_NAME=$name
fi
# exec: refine-loop takes this step's signals itself (a cancelled job's SIGINT or SIGTERM
# reaches it, not a shell), and its exit code is the step's.
exec "$bin" "${args[@]}"
