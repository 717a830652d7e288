#!/usr/bin/env bash
# Builds reviewdog's errorformat CLI (cmd/errorformat) from source with the local Go, offline.
#
# Usage: bench/build-errorformat.sh SRC OUT
#   SRC  a folder holding three checkouts (work trees, or git directories: HEAD is exported):
#          SRC/errorformat      github.com/reviewdog/errorformat
#          SRC/go-checkstyle    github.com/haya14busa/go-checkstyle (its one dependency...)
#          SRC/go-sarif         github.com/haya14busa/go-sarif      (...and the other)
#   OUT  the binary to write
#
# No module is downloaded (GOPROXY=off): the two dependencies are wired to their checkouts with
# `replace` directives in a copy under a temp folder. Nothing of errorformat is kept in this
# repository. Go >= 1.13 (Debian's golang-go is enough).
set -euo pipefail

(($# == 2)) || { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
src=$1 out=$2
command -v go >/dev/null || { echo "build-errorformat: go not found" >&2; exit 2; }
[[ $out == /* ]] || out=$PWD/$out

work=$(mktemp -d "${TMPDIR:-/tmp}/errorformat-build.XXXXXX")
trap 'rm -rf "$work"' EXIT

copy() { # copy NAME: SRC/NAME (work tree or git directory) to $work/NAME
  local from=$src/$1
  mkdir -p "$work/$1"
  if [[ -d $from/.git || -f $from/go.mod || -d $from/checkstyle || -d $from/cmd ]]; then
    cp -a "$from/." "$work/$1/"
  elif git --git-dir="$from" rev-parse --verify -q HEAD >/dev/null 2>&1; then
    git --git-dir="$from" archive HEAD | tar -x -C "$work/$1"
  else
    echo "build-errorformat: $from is neither a checkout nor a git directory" >&2; exit 2
  fi
}
copy errorformat
copy go-checkstyle
copy go-sarif
# go-checkstyle predates modules: give it a go.mod so that `replace` can point at it.
[[ -f $work/go-checkstyle/go.mod ]] ||
  printf 'module github.com/haya14busa/go-checkstyle\n\ngo 1.13\n' >"$work/go-checkstyle/go.mod"

cd "$work/errorformat"
go mod edit \
  -replace github.com/haya14busa/go-checkstyle=../go-checkstyle \
  -replace github.com/haya14busa/go-sarif=../go-sarif
GOPROXY=off GOFLAGS=-mod=mod GOTOOLCHAIN=local \
  go build -trimpath -o "$out" ./cmd/errorformat
echo "build-errorformat: built $out ($(git -C "$src/errorformat" rev-parse --short HEAD 2>/dev/null ||
  git --git-dir="$src/errorformat" rev-parse --short HEAD 2>/dev/null || echo '?'), $(go version))" >&2
