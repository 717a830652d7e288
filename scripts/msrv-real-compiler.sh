#!/usr/bin/env bash
# Issue 35's bar 2 with a real old compiler: the `msrv` check `init` writes, on Debian's rustc 1.63
# and cargo 0.66 (rustup cannot fetch old toolchains where static.rust-lang.org is unreachable;
# Debian's packages can be), rolls back a fix that needs Rust 1.87 (`u32::is_multiple_of`):
#   A. the minimum only in the CI (`dtolnay/rust-toolchain@1.63`): clippy, not knowing it, offers
#      the fix, and its own `cargo clippy --fix` makes it;
#   B. `rust-version = "1.63"` in Cargo.toml: clippy keeps to it, so a command that writes the
#      same change stands in for an agent.
# Needs apt-get (Debian 12), rustup, and a built binary. Nothing outside a temporary folder is
# changed: the toolchains live in a private RUSTUP_HOME.
#
#   scripts/msrv-real-compiler.sh [path/to/refine-loop]
set -euo pipefail

binary=$(realpath "${1:-target/release/refine-loop}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The old toolchain, unpacked from Debian's packages.
mkdir -p "$work/debs" "$work/root" "$work/old/bin"
(cd "$work/debs" && apt-get download -q rustc cargo libstd-rust-1.63 libstd-rust-dev \
    libgit2-1.5 libssh2-1 libhttp-parser2.9 libmbedtls14 libmbedx509-1 libmbedcrypto7 \
    >/dev/null 2>&1)
for deb in "$work"/debs/*.deb; do dpkg -x "$deb" "$work/root"; done
for program in rustc cargo rustdoc; do
    printf '#!/bin/sh\nLD_LIBRARY_PATH=%s/root/usr/lib/x86_64-linux-gnu exec %s/root/usr/bin/%s "$@"\n' \
        "$work" "$work" "$program" >"$work/old/bin/$program"
    chmod +x "$work/old/bin/$program"
done

# A private RUSTUP_HOME: the stable toolchain of this machine, and the old one as `1.63`.
host=$(rustc -vV | sed -n 's/^host: //p')
stable=$(rustc --print sysroot)
export RUSTUP_HOME="$work/rustup"
mkdir -p "$RUSTUP_HOME/toolchains"
ln -s "$stable" "$RUSTUP_HOME/toolchains/stable-$host"
ln -s "$work/old" "$RUSTUP_HOME/toolchains/1.63-$host"
printf 'default_toolchain = "stable-%s"\nprofile = "minimal"\nversion = "12"\n' "$host" \
    >"$RUSTUP_HOME/settings.toml"
echo "old toolchain: $(cargo +1.63 --version), $(rustc +1.63 --version)"

crate() { # name, manifest's extra line, CI file's toolchain line
    local dir="$work/$1"
    mkdir -p "$dir/src" "$dir/.github/workflows"
    cd "$dir"
    git init -q && git config user.email demo@example.com && git config user.name demo
    printf '[package]\nname = "leap"\nversion = "0.1.0"\nedition = "2021"\n%s\n[workspace]\n' "$2" \
        >Cargo.toml
    printf 'pub fn leap(y: u32) -> bool {\n    y %% 4 == 0\n}\n' >src/lib.rs
    printf 'on: [push]\njobs:\n  msrv:\n    runs-on: ubuntu-latest\n    steps:\n%s      - run: cargo check\n' \
        "$3" >.github/workflows/ci.yml
    printf '/target\n' >.gitignore
    git add -A && git commit -qm crate
    "$binary" init >/dev/null
}

report() { # name
    echo "--- $1: the msrv check init wrote"
    sed -n '/^name = "msrv"/,/^parser/p' refine-loop.toml | sed -n 's/^run = /  run = /p'
    echo "--- $1: what the run did"
    tail -n 3 run.out | head -n 1
    sed -n '/## Cycles/,/## Categories/p' .refine-loop/REFINE-LOOP-FINAL.md | grep '^|'
    grep -h 'E0599' .refine-loop/cycle-1/gate-output.txt | head -n 1
    if git diff --quiet -- src; then echo "src/ as committed: rolled back to the byte"; else
        echo "src/ CHANGED:"; git diff -- src; exit 1; fi
}

crate ci-only "" "      - uses: dtolnay/rust-toolchain@1.63\n"
git add refine-loop.toml && git commit -qm config
"$binary" run --max-cycles 1 >run.out 2>&1 || true
report "A (the minimum only in the CI, clippy's own fix)"

crate declared 'rust-version = "1.63"' ""
printf 'pub fn leap(y: u32) -> bool {\n    y.is_multiple_of(4)\n}\n' >after.rs
sed -i 's|^from_check = "clippy"$|categories = ["lint"]\nrun = "cp after.rs src/lib.rs"|' \
    refine-loop.toml
printf 'pub fn leap(y: u32) -> bool {\n    y %% 4 == 0\n}\n\npub fn answer() -> i32 {\n    return 42;\n}\n' \
    >src/lib.rs
git add -A && git commit -qm "config, and a lint to fix"
"$binary" run --max-cycles 1 >run.out 2>&1 || true
report "B (rust-version in Cargo.toml, an agent's change)"
