#!/usr/bin/env bash
# The action's install step: the released binary for this runner's OS and architecture, its
# sha256 checked against the release's checksum file; or a build of the action's checkout.
#
# Which: the `version` input when given (a release tag, `latest`, or `source`); else, used as
# `uses: ./` (the action inside the workspace), a build of that checkout; else the release of the
# tag the action is used at (`@v1.2.3`), and for any other ref (a major tag `@v1`, a branch, a
# commit SHA) the release of the version the action's own Cargo.toml declares, so the binary
# always matches the action's scripts. The ref and the repository come from github.action_ref
# and github.action_repository; inside composite steps the runner may leave those (and
# GITHUB_ACTION_REPOSITORY) empty (actions/runner#2473), and then they are read from the action's
# path, which the runner lays out as .../_actions/<owner>/<repository>/<ref>.
#
# Before that release exists (a commit pinned before the first release, or between a version
# bump and its tag), the release answers 404: then, for a version the action chose itself (not one
# the `version` input named, unless it is `latest` or the action's own), `resolve` chooses a build
# of the action's own checkout (github.action_path), with the cargo cache step, and prints one
# notice saying so. `version: source` stays the explicit way to build.
#
# `install.sh resolve` only decides: it writes `version` (and, for a source build, the
# `cache-key` of cargo's downloads and build folder) to $GITHUB_OUTPUT, for the cache step.
set -euo pipefail

action=${REFINE_LOOP_ACTION_PATH:?the action path is not set}
bin_dir=${RUNNER_TEMP:-/tmp}/refine-loop-bin
target_dir=${RUNNER_TEMP:-/tmp}/refine-loop-target

path_repo='' path_ref=''
if [[ $action =~ /_actions/([^/]+)/([^/]+)/([^/]+)(/|$) ]]; then
  path_repo="${BASH_REMATCH[1]}/${BASH_REMATCH[2]}"
  path_ref=${BASH_REMATCH[3]}
fi

version=${REFINE_LOOP_ACTION_VERSION:-}
declared=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$action/Cargo.toml" 2>/dev/null | head -n 1 || true)
# Whether a missing release may fall back to the action's own source: the version is one the
# action chose, `latest`, or the one its own Cargo.toml declares.
may_build=false
if [[ -z $version || $version == latest || $version == "v$declared" ]]; then
  may_build=true
fi
if [[ -z $version ]]; then
  ref=${REFINE_LOOP_ACTION_REF:-$path_ref}
  workspace=${GITHUB_WORKSPACE:-}
  if [[ -n $workspace && ( $action == "$workspace" || $action == "$workspace"/* ) ]]; then
    version=source
  elif [[ $ref =~ ^v[0-9]+\.[0-9]+\.[0-9]+([-+].*)?$ ]]; then
    version=$ref
  else
    version=v${declared:?the action has no Cargo.toml version}
  fi
fi

# A file's sha256, with whichever tool the runner has (macOS has shasum, not sha256sum).
sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d ' ' -f 1
  else
    shasum -a 256 "$1" | cut -d ' ' -f 1
  fi
}

# The release's archive for this runner, and where it is: sets triple, base and archive.
release_location() {
  case "${RUNNER_OS:-Linux}-${RUNNER_ARCH:-X64}" in
    Linux-X64) triple=x86_64-unknown-linux-musl ;;
    Linux-ARM64) triple=aarch64-unknown-linux-musl ;;
    macOS-X64) triple=x86_64-apple-darwin ;;
    macOS-ARM64) triple=aarch64-apple-darwin ;;
    *) echo "refine-loop: no release for ${RUNNER_OS:-?}-${RUNNER_ARCH:-?}; use version: source" >&2; return 1 ;;
  esac
  local repo=${REFINE_LOOP_RELEASE_REPO:-${REFINE_LOOP_ACTION_REPOSITORY:-${GITHUB_ACTION_REPOSITORY:-${path_repo:-org/refine-loop-action}}}}
  if [[ -n ${REFINE_LOOP_RELEASE_BASE:-} ]]; then
    base=$REFINE_LOOP_RELEASE_BASE # a mirror (or, in the tests, a local folder or server)
  elif [[ $version == latest ]]; then
    base="https://github.com/$repo/releases/latest/download"
  else
    base="https://github.com/$repo/releases/download/$version"
  fi
  archive="refine-loop-$triple.tar.gz"
}

if [[ ${1:-} == resolve ]]; then
  # A release the action chose that does not exist yet (404, not a network failure): a build of
  # the action's own checkout instead, said once.
  if [[ $version != source && $may_build == true ]] && release_location 2>/dev/null; then
    status=$(curl -sSL --retry 2 -o /dev/null -w '%{http_code}' "$base/$archive.sha256" 2>/dev/null || true)
    if [[ $status == 404 ]]; then
      echo "::notice title=refine-loop built from source::no refine-loop release $version at $base (404): building it from the action's own source ($action) with cargo, cached between runs. Set version: source to choose this, or version: to an existing release."
      version=source
    fi
  fi
  {
    echo "version=$version"
    if [[ $version == source ]]; then
      toolchain=$(rustc --version 2>/dev/null || echo unknown)
      lock=$(sha256_of "$action/Cargo.lock")
      echo "cache-key=refine-loop-source-${RUNNER_OS:-Linux}-${RUNNER_ARCH:-X64}-${toolchain//[^A-Za-z0-9.]/_}-$lock"
      echo "target-dir=$target_dir"
    fi
  } >>"${GITHUB_OUTPUT:-/dev/stdout}"
  exit 0
fi
mkdir -p "$bin_dir"

if [[ $version == source ]]; then
  cargo build --release --locked --manifest-path "$action/Cargo.toml" --target-dir "$target_dir"
  cp "$target_dir/release/refine-loop" "$bin_dir/"
else
  release_location || exit 1
  work=$(mktemp -d)
  for file in "$archive" "$archive.sha256"; do
    if ! curl -fsSL --retry 3 -o "$work/$file" "$base/$file" 2>"$work/curl.err"; then
      echo "refine-loop: no release $version of $file at $base ($(tail -n 1 "$work/curl.err")); set the action's version: to an existing release, or to source to build it from the action's checkout" >&2
      exit 1
    fi
  done
  # The checksum file is `sha256sum` output: the hex digest, then the file's name.
  expected=$(cut -d ' ' -f 1 <"$work/$archive.sha256")
  if [[ $(sha256_of "$work/$archive") != "$expected" ]]; then
    echo "refine-loop: $archive does not match its published sha256; refusing to install it" >&2
    exit 1
  fi
  tar -xzf "$work/$archive" -C "$bin_dir" refine-loop
  rm -rf "$work"
fi
chmod +x "$bin_dir/refine-loop"

# A confined delegate gets the whole work tree (its top included) with `.git` and the state dir
# read-only, in a mount namespace the loop makes in a user namespace. Ubuntu 24.04 (GitHub's
# ubuntu-latest) lets a program make a user namespace only when its AppArmor profile says
# `userns`: give this binary, and only it, such a profile. Without it the loop still confines,
# but a delegate cannot create, remove or rename at the tree's top (the run warns).
restrict=/proc/sys/kernel/apparmor_restrict_unprivileged_userns
if [ "$(cat "$restrict" 2>/dev/null)" = 1 ] && [ -e /etc/apparmor.d/abi/4.0 ] &&
  command -v apparmor_parser >/dev/null && sudo -n true 2>/dev/null; then
  binary=$(realpath "$bin_dir/refine-loop")
  profile=$(mktemp)
  printf 'abi <abi/4.0>,\ninclude <tunables/global>\n\nprofile refine-loop "%s" flags=(unconfined) {\n  userns,\n}\n' \
    "$binary" >"$profile"
  if sudo -n install -m 0644 "$profile" /etc/apparmor.d/refine-loop &&
    sudo -n apparmor_parser -r /etc/apparmor.d/refine-loop; then
    echo "refine-loop: AppArmor lets $binary make user namespaces (for its delegates' mount namespace)"
  else
    echo "::warning::refine-loop: could not give $binary an AppArmor profile with userns; a confined delegate cannot create, remove or rename at the tree's top"
  fi
  rm -f "$profile"
fi
echo "$bin_dir" >>"${GITHUB_PATH:-/dev/null}"
"$bin_dir/refine-loop" --version
