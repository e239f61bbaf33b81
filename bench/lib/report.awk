# bench/lib/report.awk: turns raw.tsv (see bench/lib/common.sh) into the
# Markdown results page: per scenario, each client's median and IQR over
# the measured rounds (the warm-up round, w1, is left out), CPU seconds
# per million records, peak RSS, the consumers' checksum verdict, our
# client as a multiple of each peer, then issue #17's targets against what
# was measured, and the OpenResty section (issue #16). Only arithmetic on what the runs printed: a figure a
# client did not report shows as "n/a".
#   awk -F'\t' -v settings=OUT/settings.txt -v checksums=OUT/checksums.txt \
#       -v extra_charts="chart-cpu.png chart-e2e.png" -f bench/lib/report.awk OUT/raw.tsv

function isort(a, n,    i, j, v) {
    for (i = 2; i <= n; i++) {
        v = a[i]
        for (j = i - 1; j >= 1 && a[j] > v; j--) a[j + 1] = a[j]
        a[j + 1] = v
    }
}

# Quantile q (0..1, linear between ranks) of column c of (scenario,
# client) over the measured rounds; "" if none. Column 0 is CPU s per
# million records (CPU s / records * 1e6).
function stat(s, cl, c, q,    k, n, i, a, x, pos, lo) {
    k = s SUBSEP cl
    n = 0
    for (i = 1; i <= runs[k]; i++) {
        if (c == 0) {
            if (val[k, i, 3] == "-" || val[k, i, 10] == "-" || val[k, i, 10] + 0 == 0) continue
            x = val[k, i, 3] / val[k, i, 10] * 1e6
        } else {
            if (val[k, i, c] == "-" || val[k, i, c] == "") continue
            x = val[k, i, c] + 0
        }
        a[++n] = x
    }
    if (n == 0) return ""
    isort(a, n)
    pos = 1 + q * (n - 1)
    lo = int(pos)
    if (lo >= n) return a[n]
    return a[lo] + (pos - lo) * (a[lo + 1] - a[lo])
}
function med(s, cl, c) { return stat(s, cl, c, 0.5) }

function fmt_int(x,    s, neg, out) {
    if (x == "") return "n/a"
    s = sprintf("%.0f", x)
    neg = substr(s, 1, 1) == "-"
    if (neg) s = substr(s, 2)
    out = ""
    while (length(s) > 3) { out = "," substr(s, length(s) - 2) out; s = substr(s, 1, length(s) - 3) }
    return (neg ? "-" : "") s out
}

function fmt(x, p) { return x == "" ? "n/a" : sprintf("%." p "f", x) }

function have(s, cl) { return runs[s SUBSEP cl] > 0 }

function runs_cell(s, cl,    k, t) {
    k = s SUBSEP cl
    t = (runs[k] + 0) ""
    if (failed[k]) t = t " (+" failed[k] " FAILED)"
    return t
}

function rate_cell(s, cl,    m) {
    m = med(s, cl, 1)
    if (m == "") return "n/a"
    if (runs[s SUBSEP cl] < 3) return fmt_int(m)
    return fmt_int(m) " (" fmt_int(stat(s, cl, 1, 0.25)) "–" fmt_int(stat(s, cl, 1, 0.75)) ")"
}

function lat_cell(s, cl) {
    if (med(s, cl, 5) == "") return "n/a"
    return fmt(med(s, cl, 5), 1) " / " fmt(med(s, cl, 6), 1) " / " fmt(med(s, cl, 7), 1)
}

# ratio of medians of column c: a's over b's, "" if either is missing.
function ratio(s1, a, s2, b, c,    x, y) {
    x = med(s1, a, c); y = med(s2, b, c)
    if (x == "" || y == "" || y + 0 == 0) return ""
    return x / y
}

function checksum_line(s,    n, i, parts, line, bad) {
    if (!(s in sums)) return
    n = split(sums[s], parts, "\n")
    line = ""
    bad = 0
    for (i = 1; i <= n; i++) {
        if (parts[i] == "") continue
        split(parts[i], f, "\t")
        if (f[1] == "MISMATCH") bad = 1
        line = line (line == "" ? "" : "; ") f[3] " from " f[2] " run(s)" (f[1] == "MISMATCH" ? " (" f[4] ")" : "")
    }
    if (bad)
        print "**Checksums DISAGREE** (records:sum): " line ". The run failed."
    else
        print "Checksums: every consumer run that reads values printed the same records:sum, " line \
              " (bench/bench_check.h: every key and value read, offsets contiguous per partition)."
    print ""
}

function throughput_section(s, title, kind,    i, cl, line, r, first, peer) {
    if (!(s in seen)) return
    print "### " title
    print ""
    if (kind == "consume") {
        print "| client | records/s median (IQR) | MiB/s | CPU s per M records | peak RSS MiB | runs |"
        print "| --- | ---: | ---: | ---: | ---: | ---: |"
    } else {
        print "| client | records/s median (IQR) | MiB/s | CPU s per M records | peak RSS MiB | send→ack ms p50 / p99 / p99.9 | runs |"
        print "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
    }
    for (i = 1; i <= nclients; i++) {
        cl = order[i]
        if (!have(s, cl) && !failed[s SUBSEP cl] && !unsupported[s SUBSEP cl]) continue
        if (unsupported[s SUBSEP cl] && !have(s, cl)) {
            print "| " (kind == "consume" ? name[cl] : pname[cl]) " | unsupported (" (kind == "consume" ? "its consumer" : "its producer") \
                  " has no " (s ~ /^sasl/ ? "SASL_SSL" : "such setting") " yet) |  |  |  | " (kind == "consume" ? "" : " | ") "0 |"
            continue
        }
        line = "| " (kind == "consume" ? name[cl] : pname[cl]) " | " rate_cell(s, cl) " | " fmt(med(s, cl, 2), 1) " | " \
               fmt(med(s, cl, 0), 2) " | " fmt(med(s, cl, 4), 1) " | "
        if (kind != "consume") line = line lat_cell(s, cl) " | "
        print line runs_cell(s, cl) " |"
    }
    print ""
    if (kind == "consume") checksum_line(s)
    for (i = 1; i <= 3; i++) {
        cl = i == 1 ? "kn" : i == 2 ? "lua" : "luajit"
        if (!have(s, cl)) continue
        line = "**" name[cl] "**:"
        first = 1
        if (cl != "kn" && (r = ratio(s, cl, s, "kn", 1)) != "") { line = line " " sprintf("%.2f", r) " of C"; first = 0 }
        if (cl == "kn" && (r = ratio(s, cl, s, "kn-base", 1)) != "") { line = line " " sprintf("%.3f", r) " of the base commit"; first = 0 }
        split("java-warm java-cold java rdk-cur-tuned rdk-cur rdk", peers, " ")
        for (j = 1; j <= 6; j++) {
            peer = peers[j]
            if ((r = ratio(s, cl, s, peer, 1)) != "") { line = line (first ? " " : ", ") sprintf("%.2fx", r) " " short[peer]; first = 0 }
        }
        if ((r = ratio(s, cl, s, "probe", 1)) != "") { line = line (first ? " " : ", ") sprintf("%.2f", r) " of the ceiling"; first = 0 }
        if (kind == "consume" && (r = ratio(s, cl, s, "java-warm", 4)) != "" && r > 0) line = line "; peak RSS " sprintf("1/%.0f", 1 / r) " of Java's"
        print line " (records/s medians)."
        print ""
    }
}

BEGIN {
    FS = "\t"
    while ((getline l < settings) > 0) {
        eq = index(l, "=")
        if (eq) set[substr(l, 1, eq - 1)] = substr(l, eq + 1)
    }
    while (checksums != "" && (getline l < checksums) > 0) {
        split(l, f, "\t")
        sums[f[1]] = sums[f[1]] f[2] "\t" f[3] "\t" f[4] "\t" f[5] "\n"
    }
    nclients = split("kn kn-base kn-osbuf lua luajit java-warm java-cold java-cp java java-e2e-tool rdk rdk-cur rdk-cur-tuned probe", order, " ")
    name["java-e2e-tool"] = "Kafka's EndToEndLatency (Java, one record at a time, for reference)"
    name["kn"] = "kafka-native (C), defaults"
    name["kn-base"] = "kafka-native (C), base commit " set["base"] " (--base-build)"
    name["kn-osbuf"] = "kafka-native (C), receive.buffer.bytes=-1 (the OS's autotuning)"
    name["lua"] = "kafka-native (Lua 5.4)"
    name["luajit"] = "kafka-native (LuaJIT)"
    name["java-warm"] = "Java client, warm JVM (BenchConsumer's re-reads)"
    name["java-cold"] = "Java client, cold JVM (BenchConsumer's first pass)"
    name["java-cp"] = "Java ConsumerPerformance, cold JVM (no checksum)"
    name["java"] = "Java client"
    name["rdk"] = "librdkafka " set["rdk"] " (Debian), defaults"
    name["rdk-cur"] = "librdkafka " set["rdk_cur"] ", defaults"
    name["rdk-cur-tuned"] = "librdkafka " set["rdk_cur"] ", tuned"
    name["probe"] = "ceiling: fetch-and-discard probe (the consumer's request shape)"
    for (i = 1; i <= nclients; i++) { pname[order[i]] = name[order[i]]; sub(/, defaults$/, "", pname[order[i]]) }
    short["java-warm"] = "Java (warm)"; short["java-cold"] = "Java (cold)"; short["java"] = "Java"
    short["rdk"] = "librdkafka " set["rdk"]; short["rdk-cur"] = "librdkafka " set["rdk_cur"]
    short["rdk-cur-tuned"] = "librdkafka " set["rdk_cur"] " tuned"
}

{
    if ($3 ~ /^w/) next   # the discarded warm-up round
    k = $1 SUBSEP $2
    seen[$1] = 1
    if ($4 == "FAILED") { failed[k]++; nfailed++; next }
    if ($4 == "UNSUPPORTED") { unsupported[k]++; next }
    n = ++runs[k]
    for (c = 1; c <= 11; c++) val[k, n, c] = $(c + 3)
}

END {
    print "## Benchmark results"
    print ""
    print "Measured " set["date"] " on `" set["host"] "` (" set["cpu"] ", Linux " set["kernel"] "), " \
          set["mode"] " mode: " set["rounds"] " measured round(s) per client" \
          (set["warmup"] == "1" ? " after a discarded warm-up round" : "") \
          ", clients in a new random order each round; pinning: " set["pin"] \
          "; consumers re-read their topic until " set["min_seconds"] " s of reading. Broker: " set["broker"] \
          ". Kafka " set["kafka"] "; librdkafka " set["rdk"] " (Debian) and " set["rdk_cur"] \
          " (bench/lib/fetch-librdkafka); " set["java"] ". Sizes: " set["sizes"] ". Commit " set["commit"] "."
    print ""
    print "Medians with the interquartile range (IQR, from 3 rounds on). Records/s and MiB/s (1 MiB = " \
          "1024² bytes of key + value; the probe counts whole record batches) are each program's own " \
          "figures over its reading time (the group join and the wait after each re-reading seek " \
          "excluded). CPU s per M records: the process's CPU (GNU time; JVM included) over the records " \
          "it read or sent, except Java's BenchConsumer rows, which take the JVM's CPU time over the " \
          "pass or window they report. Every consumer except ConsumerPerformance reads every key and " \
          "value into one checksum and checks offsets (docs/benchmarks.md). Producers: *defaults* is " \
          "each client's own configuration; *matched* is " set["matched"] " for every client " \
          "(librdkafka: the same in its names)."
    print ""
    if (nfailed) { print "**" nfailed " run(s) FAILED** (see raw.tsv and logs/)."; print "" }
    print "![records/s relative to the Java client](chart.png)"
    print ""
    if (index(extra_charts, "chart-cpu.png")) { print "![CPU seconds per million records](chart-cpu.png)"; print "" }

    # ---- targets (issues #17, #12) -------------------------------------------
    print "### Targets (issues #17 and #12)"
    print ""
    print "| target | measured | met |"
    print "| --- | ---: | :---: |"
    target("consume 10 B ≥ 3x Java (warm JVM)", ratio("consume-10b", "kn", "consume-10b", "java-warm", 1), 3, "x")
    target("consume 10 B ≥ 2x librdkafka tuned", ratio("consume-10b", "kn", "consume-10b", "rdk-cur-tuned", 1), 2, "x")
    target("consume 10 KiB ≥ 0.9 of the ceiling (defaults)", ratio("consume-10kib", "kn", "consume-10kib", "probe", 1), 0.9, "")
    target("consume 10 KiB ≥ 1.2x librdkafka tuned (defaults)", ratio("consume-10kib", "kn", "consume-10kib", "rdk-cur-tuned", 1), 1.2, "x")
    target("produce 10 B ≥ 1.6x Java (matched)", ratio("produce-10b-matched", "kn", "produce-10b-matched", "java", 1), 1.6, "x")
    target("produce 10 B ≥ 1.2x librdkafka (matched)", ratio("produce-10b-matched", "kn", "produce-10b-matched", "rdk-cur", 1), 1.2, "x")
    target("produce 10 KiB ≥ 1.3x Java (matched)", ratio("produce-10kib-matched", "kn", "produce-10kib-matched", "java", 1), 1.3, "x")
    target("produce 10 KiB ≥ 1.2x librdkafka (matched)", ratio("produce-10kib-matched", "kn", "produce-10kib-matched", "rdk-cur", 1), 1.2, "x")
    target_max("p99 end-to-end latency ≤ Java's", ratio("e2e-latency", "kn", "e2e-latency", "java", 6), 1, "x")
    target_max("p99 end-to-end latency ≤ librdkafka's", ratio("e2e-latency", "kn", "e2e-latency", "rdk-cur", 6), 1, "x")
    target_max("consumer peak RSS ≤ 1/20 of Java's, 10 B", ratio("consume-10b", "kn", "consume-10b", "java-warm", 4), 0.05, "frac")
    target("Lua 5.4 consumer ≥ 0.7 of C, 10 B", ratio("consume-10b", "lua", "consume-10b", "kn", 1), 0.7, "")
    target("LuaJIT consumer ≥ 0.9 of C, 10 B", ratio("consume-10b", "luajit", "consume-10b", "kn", 1), 0.9, "")
    target("1,000 partitions ≥ 0.8 of 16-partition records/s", ratio("consume-10b-1000p", "kn", "consume-10b", "kn", 1), 0.8, "")
    target_max("idle consumer (1,000 partitions) ≤ 0.2% of a core", med("idle-1000p", "kn", 9), 0.2, "%")
    target("share consumer 10 B ≥ 3x Java (join included)", ratio("share-consume-10b", "kn", "share-consume-10b", "java", 1), 3, "x")
    # issue #12's (SASL_SSL, SCRAM-SHA-512; the consumers read consume-10b's topic)
    target("SASL_SSL consume 10 B ≥ 0.8 of our plaintext rate", ratio("sasl-consume-10b", "kn", "consume-10b", "kn", 1), 0.8, "")
    target("SASL_SSL consume 10 B ≥ 3x Java (warm JVM)", ratio("sasl-consume-10b", "kn", "sasl-consume-10b", "java-warm", 1), 3, "x")
    target("SASL_SSL produce 10 B ≥ 1.5x Java", ratio("sasl-produce-10b", "kn", "sasl-produce-10b", "java", 1), 1.5, "x")
    # what bounds the first: the listener's own ceiling against plaintext's
    context("(not a target) the SASL_SSL ceiling / the plaintext ceiling", ratio("sasl-consume-10b", "probe", "consume-10b", "probe", 1))
    print ""

    throughput_section("consume-10b", "Consume 10 B records, 16 partitions", "consume")
    throughput_section("consume-10kib", "Consume 10 KiB records, 3 partitions", "consume")
    throughput_section("produce-10b", "Produce 10 B records to 16 partitions, each client's defaults", "produce")
    throughput_section("produce-10b-matched", "Produce 10 B records to 16 partitions, matched settings", "produce")
    throughput_section("produce-10kib", "Produce 10 KiB records to 3 partitions, each client's defaults", "produce")
    throughput_section("produce-10kib-matched", "Produce 10 KiB records to 3 partitions, matched settings", "produce")
    throughput_section("consume-10b-1000p", "Scale: consume 10 B records from 1,000 partitions", "consume")
    throughput_section("sasl-consume-10b", "SASL_SSL (SCRAM-SHA-512): consume 10 B records, 16 partitions", "consume")
    throughput_section("sasl-produce-10b", "SASL_SSL (SCRAM-SHA-512): produce 10 B records to 16 partitions, defaults", "produce")
    throughput_section("share-consume-10b", "Share group (KIP-932): one share consumer, 10 B records, 16 partitions (join included; Java: ShareConsumerPerformance)", "consume")

    resty_section("resty-produce", "OpenResty: records/s from request handlers in one nginx worker, 1 record per request")
    resty_section("resty-produce-batch", "OpenResty: records/s from request handlers in one nginx worker, 100 records per request")

    if ("e2e-latency" in seen) {
        print "### End-to-end latency at a fixed rate (" set["e2e"] ")"
        print ""
        if (index(extra_charts, "chart-e2e.png")) { print "![end-to-end latency percentiles](chart-e2e.png)"; print "" }
        print "| client | p50 ms | p99 ms | p99.9 ms | max ms | runs |"
        print "| --- | ---: | ---: | ---: | ---: | ---: |"
        for (i = 1; i <= nclients; i++) {
            cl = order[i]
            if (!have("e2e-latency", cl) && !failed["e2e-latency" SUBSEP cl]) continue
            print "| " pname[cl] " | " fmt(med("e2e-latency", cl, 5), 2) " | " fmt(med("e2e-latency", cl, 6), 2) " | " \
                  fmt(med("e2e-latency", cl, 7), 2) " | " fmt(med("e2e-latency", cl, 8), 1) " | " runs_cell("e2e-latency", cl) " |"
        }
        print ""
    }
    if ("idle-1000p" in seen) {
        print "### Scale: idle consumer holding 1,000 partitions"
        print ""
        print "| client | CPU % of one core | CPU s in the window | peak RSS MiB |"
        print "| --- | ---: | ---: | ---: |"
        for (i = 1; i <= nclients; i++) {
            cl = order[i]
            if (!have("idle-1000p", cl) && !failed["idle-1000p" SUBSEP cl]) continue
            print "| " name[cl] " | " fmt(med("idle-1000p", cl, 9), 2) " | " \
                  fmt(med("idle-1000p", cl, 3), 2) " | " fmt(med("idle-1000p", cl, 4), 1) " |"
        }
        print ""
    }
    if (("group-join-classic" in seen) || ("group-join-consumer" in seen)) {
        print "### Group join"
        print ""
        print "| client | classic protocol, ms | KIP-848 consumer protocol, ms |"
        print "| --- | ---: | ---: |"
        for (i = 1; i <= nclients; i++) {
            cl = order[i]
            if (!have("group-join-classic", cl) && !have("group-join-consumer", cl)) continue
            print "| " name[cl] " | " fmt_int(med("group-join-classic", cl, 9)) " | " fmt_int(med("group-join-consumer", cl, 9)) " |"
        }
        print ""
    }
}

# Issue #16: one nginx worker's handlers, ours (kn-resty) and
# lua-resty-kafka's async producer (resty-kafka) under the same wrk load.
function col_sum(s, cl, c,    k, i, t) {
    k = s SUBSEP cl
    t = 0
    for (i = 1; i <= runs[k]; i++) if (val[k, i, c] != "-") t += val[k, i, c]
    return t
}

function resty_section(s, title,    i, cl, r, q, c, clients) {
    if (!(s in seen)) return
    print "### " title
    print ""
    print "Load: " set["resty_load"] ". Broker: " set["resty_broker"] ". nginx " set["resty_nginx"] ". " \
          "Records/s: what reached the topic (its end offsets) over the time from the start of the load to " \
          "the last record's arrival, not what handlers accepted; lost: accepted by a handler, never on the " \
          "topic. Latency: wrk's, per request. CPU and RSS: the nginx worker's."
    print ""
    print "| client | records/s median (IQR) | MiB/s | worker CPU s per M records | worker peak RSS MiB | request ms p50 / p99 / max | records lost, all runs | runs |"
    print "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    split("kn-resty resty-kafka nginx-alone", clients, " ")
    for (i = 1; i <= 3; i++) {
        cl = clients[i]
        if (!have(s, cl) && !failed[s SUBSEP cl]) continue
        print "| " (cl == "kn-resty" ? "kafka-native (kafka_native.resty)" : \
                    cl == "nginx-alone" ? "ceiling: nginx alone (the handler sends nothing)" : set["resty_rival"]) \
              " | " rate_cell(s, cl) " | " \
              fmt(med(s, cl, 2), 2) " | " fmt(med(s, cl, 0), 2) " | " fmt(med(s, cl, 4), 1) " | " \
              fmt(med(s, cl, 5), 2) " / " fmt(med(s, cl, 6), 2) " / " fmt(med(s, cl, 8), 1) " | " \
              fmt_int(col_sum(s, cl, 9)) " | " runs_cell(s, cl) " |"
    }
    print ""
    c = ratio(s, "kn-resty", s, "nginx-alone", 1)
    if (c != "")
        print "kafka_native.resty runs at " sprintf("%.2f", c) " of the ceiling" \
              (ratio(s, "resty-kafka", s, "nginx-alone", 1) == "" ? "" : \
               sprintf(", lua-resty-kafka at %.2f", ratio(s, "resty-kafka", s, "nginx-alone", 1))) \
              " (the ceiling: the same requests with no producer; no client can exceed it at this load)."
    print ""
    r = ratio(s, "kn-resty", s, "resty-kafka", 1)
    q = ratio(s, "kn-resty", s, "resty-kafka", 6)
    if (r == "")
        print "lua-resty-kafka: " (set["resty_rival"] ~ /^not measured/ ? set["resty_rival"] : "not measured (no successful run)") "."
    else
        print "**kafka_native.resty**: " sprintf("%.2fx", r) " lua-resty-kafka's records/s, p99 request latency " \
              (q == "" ? "n/a" : sprintf("%.2f", q)) " of its (medians). Issue #16's goal, ≥ 5x at equal or better p99: " \
              ((r >= 5 && q != "" && q <= 1) ? "met" : "**not met**") "."
    if (r != "" && r < 5 && ratio(s, "nginx-alone", s, "resty-kafka", 1) != "" && ratio(s, "nginx-alone", s, "resty-kafka", 1) < 5)
        print "At this load no client can reach 5x: the ceiling itself is " \
              sprintf("%.2fx", ratio(s, "nginx-alone", s, "resty-kafka", 1)) " lua-resty-kafka's rate."
    print ""
}

function target(what, r, want, unit) {
    if (r == "") { print "| " what " | not measured | – |"; return }
    print "| " what " | " sprintf("%.2f%s", r, unit) " | " (r >= want ? "yes" : "**no**") " |"
}

function context(what, r) {
    if (r != "") print "| " what " | " sprintf("%.2f", r) " | – |"
}

function target_max(what, r, limit, unit) {
    if (r == "") { print "| " what " | not measured | – |"; return }
    print "| " what " | " (unit == "frac" ? (r > 0 ? sprintf("1/%.0f", 1 / r) : "0") : sprintf("%.2f%s", r, unit)) " | " (r <= limit ? "yes" : "**no**") " |"
}
