#!/bin/sh
# Seeds the fuzz corpora from the parser fixtures and the built-in definitions.
# Usage: fuzz/seed-corpus.sh [DIR]   (default DIR: fuzz/corpus; corpora go to DIR/<target>/)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/fuzz/corpus}
mkdir -p "$out/parse_output" "$out/parse_definition" "$out/preprocess"
# Parser names in catalogue order (sorted), so that the first byte picks the matching parser.
names=$(sed -n 's/^name = "\(.*\)"$/\1/p' "$root"/gate-parsers/*.toml | LC_ALL=C sort)
for file in "$root"/tests/fixtures/parsers/*/*.txt; do
    dir=$(basename "$(dirname "$file")")
    base=$(basename "$file" .txt)
    [ "$base" = TOOLS ] && continue
    tool=${dir%-human}
    if [ "$dir" = framed ]; then
        # A framed variant: the parser of the fixture it wraps (framed/MANIFEST.tsv).
        source=$(awk -F'\t' -v v="$base.txt" '$1 == v { print $2 }' "$(dirname "$file")/MANIFEST.tsv")
        tool=$(dirname "$source")
        tool=${tool%-human}
    fi
    index=$(printf '%s\n' "$names" | grep -nx "$tool" | cut -d: -f1 || true)
    index=$(( ${index:-1} - 1 ))
    # Byte 0: parser index; byte 1: knobs (working directory, line-cut length).
    { printf "\\$(printf '%03o' "$index")\\000"; cat "$file"; } > "$out/parse_output/$dir-$base"
    # preprocess: byte 0 the line-cut length (0: the real limit), byte 1 the chunk sizes.
    { printf '\000\007'; cat "$file"; } > "$out/preprocess/$dir-$base"
done
for file in "$root"/gate-parsers/*.toml; do
    base=$(basename "$file" .toml)
    fixture=$(ls "$root"/tests/fixtures/parsers/"$base"/*.txt 2>/dev/null | grep -v TOOLS | head -n 1 || true)
    if [ -n "$fixture" ]; then
        # Definition, NUL, an output for the compiled parser to read.
        { cat "$file"; printf '\000'; cat "$fixture"; } > "$out/parse_definition/$base"
    else
        cp "$file" "$out/parse_definition/$base"
    fi
done
echo "seeded $(ls "$out/parse_output" | wc -l) outputs, $(ls "$out/parse_definition" | wc -l) definitions," \
    "$(ls "$out/preprocess" | wc -l) preprocess inputs in $out"
