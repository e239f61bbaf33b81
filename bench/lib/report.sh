#!/usr/bin/env bash
# bench/lib/report.sh OUT: prints the Markdown results page built from
# OUT/raw.tsv and OUT/settings.txt (bench/lib/report.awk does the work).
set -euo pipefail
out=${1:?usage: bench/lib/report.sh OUT}
[ -s "$out/raw.tsv" ] || { echo "bench/lib/report.sh: no runs in $out/raw.tsv" >&2; exit 1; }
extra=$(cd "$out" && ls chart-cpu.png chart-e2e.png 2>/dev/null | tr '\n' ' ' || true)
exec awk -F'\t' -v settings="$out/settings.txt" -v checksums="$out/checksums.txt" -v extra_charts="$extra" -f "$(dirname "$0")/report.awk" "$out/raw.tsv"
