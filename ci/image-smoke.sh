#!/usr/bin/env bash
# Checks a built refine-loop image where a Docker engine runs (the project's CI): its size, and a
# real check and run on a mounted repository as the image's own user, as an arbitrary uid that
# owns the repository, and as root on a repository another uid owns (safe.directory).
# Usage: ci/image-smoke.sh IMAGE
set -euo pipefail
image=${1:?usage: ci/image-smoke.sh IMAGE}
limit=$((30 * 1024 * 1024))

size=$(docker image inspect "$image" --format '{{.Size}}')
echo "image size: $size bytes (limit $limit)"
[ "$size" -le "$limit" ] || { echo "the image is over 30 MB" >&2; exit 1; }
default_user=$(docker image inspect "$image" --format '{{.Config.User}}')
echo "default user: ${default_user:-root}"
[ -n "$default_user" ] && [ "${default_user%%:*}" != 0 ] && [ "${default_user%%:*}" != root ] ||
  { echo "the image's default user is root" >&2; exit 1; }

work=$(mktemp -d)
trap 'sudo rm -rf "$work"' EXIT

# A repository with a failing gate and a delegate that fixes it, owned by `owner`.
make_repo() { # make_repo DIR OWNER
  local dir=$1 owner=$2
  mkdir -p "$dir"
  printf 'BAD\n' >"$dir/app.txt"
  printf '/.refine-loop\n' >"$dir/.gitignore"
  cat >"$dir/refine-loop.toml" <<'TOML'
[[gate.check]]
name = "bad"
category = "lint"
parser = "clippy"
run = "grep -q BAD app.txt && echo 'app.txt:1:1: error: bad' && exit 1 || exit 0"

[[delegate]]
categories = ["lint"]
run = "sed -i s/BAD/ok/ app.txt"
TOML
  git -C "$dir" init -q
  git -C "$dir" add -A
  git -C "$dir" -c user.name=t -c user.email=t@example.invalid commit -qm base
  sudo chown -R "$owner" "$dir"
}

# in_image DIR USER ARGS...: refine-loop ARGS in the image, on DIR mounted at /work, as USER.
in_image() {
  local dir=$1 user=$2
  shift 2
  docker run --rm --network none --user "$user" -v "$dir:/work" -w /work "$image" refine-loop "$@"
}

for who in "default:$default_user" "uid:4242:4242" "root-foreign:0:0"; do
  name=${who%%:*}
  user=${who#*:}
  repo="$work/$name"
  case $name in
    root-foreign) make_repo "$repo" 4242:4242 ;; # root, on a repository someone else owns
    *) make_repo "$repo" "$user" ;;
  esac
  status=0
  in_image "$repo" "$user" check || status=$?
  [ "$status" -eq 1 ] || { echo "$name: check exited $status, not 1" >&2; exit 1; }
  in_image "$repo" "$user" run --max-cycles 1
  grep -qx ok "$repo/app.txt" || { echo "$name: the fix was not kept" >&2; exit 1; }
  sudo test -f "$repo/.refine-loop/REFINE-LOOP-FINAL.md" # the state dir is owner-only
  # The snapshot store is gone after the run; the accepted change is on its private ref.
  test ! -e "$repo/.git/refine-loop"
  test -n "$(git -c safe.directory='*' -C "$repo" for-each-ref refs/refine-loop/)"
  echo "$name ($user): check exit 1, run fixed and recorded"
done
echo "the image works as its own user, as uid 4242, and as root on a foreign repository"
