#!/usr/bin/env bash
# bench/lib/chart.sh OUT: draws OUT/chart.png with gnuplot: per throughput
# scenario, each client's median records/s relative to the Java client's
# (the warm JVM's for consumers, ProducerPerformance's for producers;
# Java = 1, log scale, so 10 B and 10 KiB scenarios share one axis).
# The warm-up round (w1) is left out, as in the tables.
# The data it plots is kept in OUT/chart.dat; gnuplot's messages go to
# OUT/logs/gnuplot.log. Exit 3: nothing to plot (a run of --only scenarios
# without a Java row), which bench/run reports as a notice.
set -euo pipefail
out=${1:?usage: bench/lib/chart.sh OUT}
awk -F'\t' '
  function med(k,    n, i, j, v, a) {
    n = split(vals[k], a, " ")
    for (i = 2; i <= n; i++) { v = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > v; j--) a[j + 1] = a[j]; a[j + 1] = v }
    if (n == 0) return ""
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  $3 !~ /^w/ && $4 != "FAILED" && $4 != "UNSUPPORTED" && $4 != "-" { vals[$1 SUBSEP $2] = vals[$1 SUBSEP $2] " " $4 }
  END {
    ns = split("consume-10b consume-10kib produce-10b-matched produce-10kib-matched consume-10b-1000p", sc, " ")
    split("consume\\n10 B|consume\\n10 KiB|produce 10 B\\nmatched|produce 10 KiB\\nmatched|consume 10 B\\n1,000 partitions", label, "|")
    nc = split("kn lua luajit rdk rdk-cur rdk-cur-tuned probe", cl, " ")
    print "# scenario kafka-native(C) (Lua 5.4) (LuaJIT) librdkafka(Debian) librdkafka(current) (current, tuned) probe: records/s / Java records/s"
    for (i = 1; i <= ns; i++) {
      j = med(sc[i] SUBSEP "java-warm")
      if (j == "") j = med(sc[i] SUBSEP "java")
      if (j == "" || j + 0 == 0) continue
      line = "\"" label[i] "\""
      for (c = 1; c <= nc; c++) {
        m = med(sc[i] SUBSEP cl[c])
        line = line " " (m == "" ? "NaN" : sprintf("%.4f", m / j))
      }
      print line
    }
  }' "$out/raw.tsv" > "$out/chart.dat"
if [ "$(grep -vc '^#' "$out/chart.dat")" = 0 ]; then
  echo "bench/lib/chart.sh: no scenario with a Java figure to compare against: no chart" >&2
  exit 3
fi
title="records/s relative to the Java client = 1 (median of $(sed -n 's/^rounds=//p' "$out/settings.txt") round(s), $(sed -n 's/^date=//p' "$out/settings.txt"), $(sed -n 's/^host=//p' "$out/settings.txt"))"
gnuplot > "$out/logs/gnuplot.log" 2>&1 <<GP
set terminal pngcairo size 1200,650 noenhanced font "sans,11"
set output "$out/chart.png"
set title "$title"
set datafile missing "NaN"
set style data histograms
set style histogram clustered gap 1.5
set style fill solid 0.85 border -1
set boxwidth 0.9
set logscale y 10
set yrange [0.1:*]
set ylabel "x Java's records/s (log scale; Java = 1)"
set grid ytics mytics
set key outside bottom center horizontal
set bmargin 7
set xtics scale 0
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb "#444444"
plot "$out/chart.dat" using 2:xtic(1) title "kafka-native (C)" lc rgb "#1f77b4", \
     "" using 3 title "kafka-native (Lua 5.4)" lc rgb "#17becf", \
     "" using 4 title "kafka-native (LuaJIT)" lc rgb "#2ca02c", \
     "" using 5 title "librdkafka $(sed -n 's/^rdk=//p' "$out/settings.txt") (Debian)" lc rgb "#ffbb78", \
     "" using 6 title "librdkafka $(sed -n 's/^rdk_cur=//p' "$out/settings.txt")" lc rgb "#ff7f0e", \
     "" using 7 title "librdkafka $(sed -n 's/^rdk_cur=//p' "$out/settings.txt"), tuned" lc rgb "#d62728", \
     "" using 8 title "ceiling (fetch probe)" lc rgb "#7f7f7f"
GP
[ -s "$out/chart.png" ] || { cat "$out/logs/gnuplot.log" >&2; exit 1; }
