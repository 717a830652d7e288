#!/usr/bin/env bash
# The action's install step: the released binary for this runner's OS and architecture, its
# sha256 checked against the release's checksum file; or, with version "source" (how this
# repository tests its own action), a build of the action's checkout.
set -euo pipefail

version=${REFINE_LOOP_ACTION_VERSION:-latest}
action=${REFINE_LOOP_ACTION_PATH:?the action path is not set}
bin_dir=${RUNNER_TEMP:-/tmp}/refine-loop-bin
mkdir -p "$bin_dir"

# Used from this repository itself (`uses: ./`, no action repository), or asked for: build it.
if [[ $version == source || ( -z ${GITHUB_ACTION_REPOSITORY:-} && -f $action/Cargo.toml ) ]]; then
  target_dir=${RUNNER_TEMP:-/tmp}/refine-loop-target
  cargo build --release --locked --manifest-path "$action/Cargo.toml" --target-dir "$target_dir"
  cp "$target_dir/release/refine-loop" "$bin_dir/"
else
  case "${RUNNER_OS:-Linux}-${RUNNER_ARCH:-X64}" in
    Linux-X64) triple=x86_64-unknown-linux-musl ;;
    Linux-ARM64) triple=aarch64-unknown-linux-musl ;;
    macOS-X64) triple=x86_64-apple-darwin ;;
    macOS-ARM64) triple=aarch64-apple-darwin ;;
    *) echo "refine-loop: no release for ${RUNNER_OS:-?}-${RUNNER_ARCH:-?}; use version: source" >&2; exit 1 ;;
  esac
  repo=${REFINE_LOOP_RELEASE_REPO:-${GITHUB_ACTION_REPOSITORY:-refine-loop/refine-loop-action}}
  if [[ -n ${REFINE_LOOP_RELEASE_BASE:-} ]]; then
    base=$REFINE_LOOP_RELEASE_BASE # a mirror (or, in the tests, a local folder)
  elif [[ $version == latest ]]; then
    base="https://github.com/$repo/releases/latest/download"
  else
    base="https://github.com/$repo/releases/download/$version"
  fi
  archive="refine-loop-$triple.tar.gz"
  work=$(mktemp -d)
  curl -fsSL --retry 3 -o "$work/$archive" "$base/$archive"
  curl -fsSL --retry 3 -o "$work/$archive.sha256" "$base/$archive.sha256"
  (cd "$work" && sha256sum -c "$archive.sha256")
  tar -xzf "$work/$archive" -C "$bin_dir" refine-loop
  rm -rf "$work"
fi
chmod +x "$bin_dir/refine-loop"
echo "$bin_dir" >>"${GITHUB_PATH:-/dev/null}"
"$bin_dir/refine-loop" --version
