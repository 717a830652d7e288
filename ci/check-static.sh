#!/usr/bin/env bash
# What can be checked of the container image without a Docker engine: the binary built static
# (as the image would ship it) runs in an empty root with no HOME and no environment, as root
# and as an arbitrary uid. Needs root (chroot). Usage: ci/check-static.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

target_dir=${CARGO_TARGET_DIR:-$root/target}/static
RUSTFLAGS="-C target-feature=+crt-static" cargo build --release --locked \
  --target x86_64-unknown-linux-gnu --target-dir "$target_dir" --manifest-path "$root/Cargo.toml"
bare=$(mktemp -d)
trap 'rm -rf "$bare"' EXIT
chmod 755 "$bare"
mkdir -p "$bare/bin" "$bare/tmp"
cp "$target_dir/x86_64-unknown-linux-gnu/release/refine-loop" "$bare/bin/"
chroot_bin=$(command -v chroot)
env -i "$chroot_bin" "$bare" /bin/refine-loop --version
env -i "$chroot_bin" "$bare" /bin/refine-loop parsers >/dev/null
env -i "$chroot_bin" --userspec=12345:12345 "$bare" /bin/refine-loop parsers --json >/dev/null
echo "the static binary runs in an empty root, without HOME, as root and as uid 12345"
