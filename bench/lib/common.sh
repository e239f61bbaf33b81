# bench/lib/common.sh: helpers sourced by bench/run: messages and the
# progress line, parsing each client's output into one raw.tsv record,
# and reading a process's CPU time and peak RSS from /proc.
#
# raw.tsv columns: scenario, client, round (w1: the discarded warm-up), then
#   records/s, MiB/s, CPU s, peak RSS MiB, p50, p99, p99.9, max (ms), extra,
#   records, checksum
# ("-" when a client does not report a figure). Latencies are the
# producer's send-to-ack latency or the end-to-end latency; extra is
# rebalance.time.ms (or the join time) for consumers, CPU % for the
# idle scenario and records lost (accepted, never on the topic) for the
# resty ones; records is how many records the figures cover (every
# pass); checksum is "N:0x..." (bench/bench_check.h). CPU s is GNU time's
# for the process, except Java's BenchConsumer rows (the JVM's own CPU
# time over the pass or window they report). A run that failed has the
# single field FAILED instead, a client without the scenario's settings
# UNSUPPORTED.

# On a terminal the progress line is redrawn in place on stderr; in a
# pipe every run start is one plain line.
bench_tty=0
[ -t 2 ] && bench_tty=1
bench_total=0
bench_t_start=0
bench_run_secs=0

bench_progress_init() {
  bench_total=$1
  bench_t_start=$(date +%s)
}

bench_clear() { [ "$bench_tty" = 1 ] && printf '\r\033[K' >&2; return 0; }

bench_say() { bench_clear; echo "bench: $*" >&2; }

# Results lines go to stdout as well as the terminal (a CI log keeps them).
bench_say_plain() { bench_clear; echo "  $*"; }

bench_fmt_secs() { printf '%d:%02d' $(($1 / 60)) $(($1 % 60)); }

# bench_progress SCENARIO CLIENT ROUND [SECONDS [ROUNDS]]: announces a run.
bench_progress() {
  local done=${runs_done:-0} now elapsed left="?"
  now=$(date +%s)
  elapsed=$((now - bench_t_start))
  if [ "$done" -gt 0 ] && [ "$bench_total" -gt "$done" ]; then
    left=$(bench_fmt_secs $((elapsed * (bench_total - done) / done)))
  elif [ -n "${4:-}" ]; then
    left=$(bench_fmt_secs "$4")
  fi
  local msg="[$((done + 1))/$bench_total] $1 / $2 / round $3 of ${5:-${rounds:-1}}"
  if [ "$bench_tty" = 1 ]; then
    printf '\r\033[K%s  (elapsed %s, ~%s left)' "$msg" "$(bench_fmt_secs "$elapsed")" "$left" >&2
  else
    echo "bench: $msg (elapsed $(bench_fmt_secs "$elapsed"), ~$left left)" >&2
  fi
}

bench_run_finished() { :; }

bench_progress_end() { bench_clear; }

# The LuaJIT build of the Lua module, when luajit is installed.
bench_luajit_target() {
  command -v luajit >/dev/null && echo kafka_native_lua_jit
}

bench_rdkafka_targets() {
  pkg-config --exists rdkafka 2>/dev/null && echo librdkafka_consumer_perf librdkafka_producer_perf librdkafka_e2e_latency
}

# bench_parse KIND LOG TIMEFILE [SUB]: prints the raw.tsv fields after the
# round, or nothing when the output shows the run did not do its work.
# SUB picks java-bench's cold first pass or its warm window.
bench_parse() {
  local kind=$1 log=$2 tfile=$3 sub=${4:-}
  [ -s "$tfile" ] || return 0
  # GNU time's last line: elapsed user system maxrss_kb.
  local times
  times=$(tail -n 1 "$tfile")
  case "$times" in *[!0-9.\ ]*|'') return 0 ;; esac
  if grep -q "^WARNING: Exiting before consuming" "$log"; then return 0; fi
  awk -v kind="$kind" -v sub_="$sub" -v times="$times" '
    # The first number in a field ("(7.14 MB/sec)" -> 7.14).
    function num(s) { if (match(s, /-?[0-9]+(\.[0-9]+)?/)) return substr(s, RSTART, RLENGTH) + 0; return "" }
    BEGIN { split(times, t, " "); cpu = t[2] + t[3]; rss = t[4] / 1024
            rs = ""; p50 = p99 = p999 = mx = ex = "-"; cnt = "-"; sum = "-" }
    kind == "consume" && /^[0-9][0-9][0-9][0-9]-.*, .*, / {
      n = split($0, f, ", ")
      if (n == 10) { rs = num(f[10]); mb = num(f[9]); ex = num(f[7]); cnt = num(f[5]) }
    }
    # Every pass of a re-reading consumer (bench/bench_check.h windows).
    (kind == "consume" || kind == "lua-consume" || (kind == "java-bench" && sub_ == "warm")) && /^window [0-9]+ passes, / {
      split($0, f, ", "); cnt = num(f[2]); rs = num(f[4]); mb = num(f[5])
      if (kind == "java-bench") cpu = num(f[6])
    }
    kind == "java-bench" && sub_ == "cold" && /^java cold: / {
      split($0, f, ", "); cnt = num(f[1]); rs = num(f[2]); mb = num(f[3]); cpu = num(f[5])
    }
    kind == "java-bench" && /^java join: / { ex = num($0) }
    # ShareConsumerPerformance (and kn_share_perf): start, end, MB, MB/sec, nMsg/sec, nMsg, fetch.time.ms
    kind == "share-consume" && /^[0-9][0-9][0-9][0-9]-.*, .*, / {
      n = split($0, f, ", ")
      if (n == 7) { rs = num(f[5]); mb = num(f[4]); cnt = num(f[6]) }
    }
    /^checksum [0-9]+ records, sum 0x/ { split($0, f, ", "); sum = num(f[1]) ":" substr(f[2], 5) }
    kind == "probe" && /^probe: / {
      split($0, f, ", "); rs = num(f[2]); mb = num(f[3]); cnt = num(f[1])
    }
    kind == "produce" && / records sent, .*99\.9th/ {
      split($0, f, ", ")
      # "N records sent" "R records/sec (M MB/sec)" avg max 50th 95th 99th 99.9th
      split(f[2], a, " "); rs = num(a[1]); mb = num(a[3]); cnt = num(f[1])
      mx = num(f[4]); p50 = num(f[5]); p99 = num(f[7]); p999 = num(f[8])
    }
    kind == "e2e" && /^e2e latency: / {
      # e2e latency: N records at R records/sec, p50 A ms, p99 B ms, p99.9 C ms, max D ms
      split($0, f, ", "); sub(/^e2e latency: /, "", f[1]); split(f[1], a, " at "); cnt = num(a[1]); rs = num(a[2]); mb = 0
      for (i = 2; i <= 5; i++) sub(/^(p[0-9.]+|max) /, "", f[i])   # the label, not its digits
      p50 = num(f[2]); p99 = num(f[3]); p999 = num(f[4]); mx = num(f[5])
    }
    # Kafka EndToEndLatency: "Avg latency: A ms", "Percentiles: 50th = P, 99th = Q, 99.9th = R" (ms)
    kind == "e2e-tool" && /^Percentiles: / {
      split($0, f, ", "); p50 = num(substr(f[1], index(f[1], "="))); p99 = num(substr(f[2], index(f[2], "=")))
      p999 = num(substr(f[3], index(f[3], "="))); rs = 0; mb = 0
    }
    kind == "e2e-tool" && /^[0-9]+\t[0-9.]+$/ { cnt = $1 + 1; if ($2 + 0 > mx + 0 || mx == "-") mx = $2 + 0 }
    # bench/resty/run.lua: records on the topic, rate, MiB/s, wrk p50/p99/max,
    # and the CPU and peak RSS of the nginx worker (not of the driver).
    kind == "resty" && /^resty: [0-9]+ records (on the topic|accepted)/ {
      n = split($0, f, ", "); sub(/^resty: /, "", f[1]); cnt = num(f[1]); rs = num(f[2]); mb = num(f[3])
      for (i = 4; i <= 6; i++) sub(/^(p[0-9]+|max) /, "", f[i])
      p50 = num(f[4]); p99 = num(f[5]); mx = num(f[6]); cpu = num(f[7]); rss = num(f[8])
      for (i = 9; i <= n; i++) if (f[i] ~ /^lost /) ex = num(f[i])
    }
    kind == "join" && /join\.time\.ms|join time/ {
      for (i = 1; i <= NF; i++) if ($i ~ /^[0-9.]+$/) { ex = $i; break }
      rs = 0; mb = 0
    }
    END {
      if (rs == "") exit
      printf "%.1f\t%.3f\t%.3f\t%.1f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", rs, mb, cpu, rss, p50, p99, p999, mx, ex, cnt, sum
    }' "$log"
}

# A short summary of a raw.tsv record, for the run log.
bench_brief() {
  echo "$1" | awk -F'\t' '{
    s = ""
    if ($1 != "-") s = sprintf("%.0f records/s, %s MiB/s, ", $1, $2)
    s = s sprintf("CPU %s s, peak RSS %s MiB", $3, $4)
    if ($5 != "-") s = s sprintf(", p50/p99/p99.9 %s/%s/%s ms", $5, $6, $7)
    if ($9 != "-") s = s sprintf(", extra %s", $9)
    print s }'
}

# Cumulative user + system clock ticks of a live process (empty if gone).
bench_cpu_ticks() {
  [ -r "/proc/$1/stat" ] || return 0
  # Fields after the ")" that ends the command name: utime is the 12th.
  sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | awk '{ print $12 + $13 }'
}

# Peak resident set (VmHWM) of a live process in KiB (empty if gone).
bench_hwm_kb() {
  awk '/^VmHWM:/ { print $2 }' "/proc/$1/status" 2>/dev/null
}
