#!/usr/bin/env bash
# bench/lib/latest.sh OUT: prints OUT/results.md for bench/results/latest.md
# (the page the README's block is generated from), with the charts' paths made relative to
# bench/results/ and a line saying which command and folder it came from.
set -euo pipefail
out=${1:?usage: bench/lib/latest.sh OUT}
dir=$(basename "$out")
echo "<!-- Written by bench/run from bench/results/$dir: do not edit by hand. -->"
sed -E "s#\((chart[-a-z0-9]*\.png)\)#($dir/\1)#g" "$out/results.md"
echo
echo "Raw per-run figures: [$dir/raw.tsv]($dir/raw.tsv); the consumers' checksums: [$dir/checksums.txt]($dir/checksums.txt); each client's effective settings: [$dir/effective-settings.txt]($dir/effective-settings.txt). Reproduce with \`bench/run\`."
