#!/usr/bin/env bash
# bench/lib/chart-more.sh OUT: the two charts beside chart.png (issue #17):
#   OUT/chart-cpu.png  CPU seconds per million records, per throughput
#                      scenario and client (median; log scale)
#   OUT/chart-e2e.png  end-to-end latency p50 / p99 / p99.9 at the fixed
#                      rate, per client (median of the rounds)
# from OUT/raw.tsv (warm-up rounds left out); each is drawn only when its
# scenarios ran. Data in OUT/chart-cpu.dat and OUT/chart-e2e.dat; gnuplot's
# messages in OUT/logs/gnuplot-more.log. Prints the names of the charts it
# drew, one a line (bench/lib/report.awk links them).
set -euo pipefail
out=${1:?usage: bench/lib/chart-more.sh OUT}
rdk=$(sed -n 's/^rdk=//p' "$out/settings.txt")
cur=$(sed -n 's/^rdk_cur=//p' "$out/settings.txt")
draw() {   # MODE: writes OUT/chart-MODE.dat and, when it has rows, OUT/chart-MODE.png
  local mode=$1 dat=$out/chart-$1.dat
  awk -F'\t' -v mode="$mode" '
    function med(k,    n, i, j, v, a) {
      n = split(vals[k], a, " ")
      for (i = 2; i <= n; i++) { v = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > v; j--) a[j + 1] = a[j]; a[j + 1] = v }
      if (n == 0) return "NaN"
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    $3 ~ /^w/ || $4 == "FAILED" || $4 == "UNSUPPORTED" { next }
    $6 != "-" && $13 != "-" && $13 + 0 > 0 { vals["cpu" SUBSEP $1 SUBSEP $2] = vals["cpu" SUBSEP $1 SUBSEP $2] " " ($6 / $13 * 1e6) }
    $1 == "e2e-latency" { for (c = 8; c <= 10; c++) vals["e2e" SUBSEP c SUBSEP $2] = vals["e2e" SUBSEP c SUBSEP $2] " " $c }
    END {
      if (mode == "cpu") {
        ns = split("consume-10b consume-10kib produce-10b-matched produce-10kib-matched consume-10b-1000p", sc, " ")
        split("consume\\n10 B|consume\\n10 KiB|produce 10 B\\nmatched|produce 10 KiB\\nmatched|consume 10 B\\n1,000 partitions", label, "|")
        nc = split("kn lua luajit java-warm java rdk rdk-cur rdk-cur-tuned", cl, " ")
        for (i = 1; i <= ns; i++) {
          line = "\"" label[i] "\""; any = 0
          for (c = 1; c <= nc; c++) {
            m = med("cpu" SUBSEP sc[i] SUBSEP cl[c])
            if (m != "NaN") any = 1
            line = line " " m
          }
          if (any) print line
        }
      } else {
        nc = split("kn java rdk-cur", cl, " ")
        split("kafka-native (C)|Java client|librdkafka", name, "|")
        for (c = 1; c <= nc; c++) {
          if (med("e2e" SUBSEP 8 SUBSEP cl[c]) == "NaN") continue
          print "\"" name[c] "\" " med("e2e" SUBSEP 8 SUBSEP cl[c]) " " med("e2e" SUBSEP 9 SUBSEP cl[c]) " " med("e2e" SUBSEP 10 SUBSEP cl[c])
        }
      }
    }' "$out/raw.tsv" > "$dat"
  [ -s "$dat" ] || return 0
  if [ "$mode" = cpu ]; then
    gnuplot >> "$out/logs/gnuplot-more.log" 2>&1 <<GP
set terminal pngcairo size 1200,650 noenhanced font "sans,11"
set output "$out/chart-cpu.png"
set title "CPU seconds per million records (median; the process's CPU, JVM included; Java consumers: the JVM's CPU over the warm window)"
set datafile missing "NaN"
set style data histograms
set style histogram clustered gap 1.5
set style fill solid 0.85 border -1
set boxwidth 0.9
set logscale y 10
set ylabel "CPU s per million records (log scale; lower is better)"
set grid ytics mytics
set key outside bottom center horizontal
set bmargin 7
set xtics scale 0
plot "$dat" using 2:xtic(1) title "kafka-native (C)" lc rgb "#1f77b4", \\
     "" using 3 title "kafka-native (Lua 5.4)" lc rgb "#17becf", \\
     "" using 4 title "kafka-native (LuaJIT)" lc rgb "#2ca02c", \\
     "" using 5 title "Java consumer, warm JVM" lc rgb "#9467bd", \\
     "" using 6 title "Java producer" lc rgb "#c5b0d5", \\
     "" using 7 title "librdkafka $rdk (Debian)" lc rgb "#ffbb78", \\
     "" using 8 title "librdkafka $cur" lc rgb "#ff7f0e", \\
     "" using 9 title "librdkafka $cur, tuned" lc rgb "#d62728"
GP
  else
    gnuplot >> "$out/logs/gnuplot-more.log" 2>&1 <<GP
set terminal pngcairo size 900,500 noenhanced font "sans,11"
set output "$out/chart-e2e.png"
set title "end-to-end latency at a fixed rate ($(sed -n 's/^e2e=//p' "$out/settings.txt")), median of the rounds"
set style data histograms
set style histogram clustered gap 1.5
set style fill solid 0.85 border -1
set boxwidth 0.9
set ylabel "ms (lower is better)"
set grid ytics
set key top left
set xtics scale 0
plot "$dat" using 2:xtic(1) title "p50" lc rgb "#9ecae1", \\
     "" using 3 title "p99" lc rgb "#3182bd", \\
     "" using 4 title "p99.9" lc rgb "#08519c"
GP
  fi
  [ -s "$out/chart-$mode.png" ] || { cat "$out/logs/gnuplot-more.log" >&2; return 1; }
  echo "chart-$mode.png"
}
mkdir -p "$out/logs"
: > "$out/logs/gnuplot-more.log"
draw cpu
draw e2e
