#!/usr/bin/env bash
# What can be checked of the container image without a Docker engine: the binary built static
# (as the image would ship it) runs in an empty root with no HOME and no environment, as root
# and as an arbitrary uid. Needs root (chroot). Usage: ci/check-static.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

# The sweep only reads GitHub. In src/sweep/: no write verb of the HTTP client, no GraphQL
# mutation (the word is not used at all), no ureq call but through net::send, no net::Method but
# Get and Post, and the one Method::Post is the GraphQL query sender in github.rs.
sweep_src="$root/src/sweep"
refuse() { echo "ci/check-static.sh: src/sweep/ must only read: $1" >&2; exit 1; }
[ -f "$sweep_src/github.rs" ] || refuse "src/sweep/github.rs is missing"
! grep -rnE '\.(post|put|patch|delete)\(' "$sweep_src" || refuse "an HTTP write method"
! grep -rni 'mutation' "$sweep_src" || refuse "a GraphQL mutation"
! grep -rn 'ureq::' "$sweep_src" | grep -v 'ureq::Agent,' || refuse "ureq used directly"
! grep -rnoE 'Method::[A-Za-z_]+' "$sweep_src" | grep -vE 'Method::(Get|Post)$' || refuse "a method other than GET and POST"
posts=$(grep -rlE 'Method::Post' "$sweep_src")
[ "$posts" = "$sweep_src/github.rs" ] && [ "$(grep -c 'Method::Post' "$posts")" = 1 ] ||
  refuse "Method::Post outside the one GraphQL query sender in github.rs"
echo "src/sweep/ sends GET and GraphQL queries only"
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
