# bench/lib/report.awk: turns raw.tsv (see bench/lib/common.sh) into the
# Markdown results page: per scenario, each client's medians (records/s
# with min-max spread over the rounds), our client as a multiple of each
# peer and as a fraction of the fetch-and-discard ceiling, then the issue's
# targets against what was measured. Only arithmetic on what the runs
# printed: a figure a client did not report shows as "n/a".
#   awk -F'\t' -v settings=OUT/settings.txt -f bench/lib/report.awk OUT/raw.tsv

function isort(a, n,    i, j, v) {
    for (i = 2; i <= n; i++) {
        v = a[i]
        for (j = i - 1; j >= 1 && a[j] > v; j--) a[j + 1] = a[j]
        a[j + 1] = v
    }
}

# Median / min / max of column c of (scenario, client), "" if none.
function stat(s, cl, c, what,    k, n, i, a, m) {
    k = s SUBSEP cl
    n = 0
    for (i = 1; i <= runs[k]; i++)
        if (val[k, i, c] != "-" && val[k, i, c] != "") a[++n] = val[k, i, c] + 0
    if (n == 0) return ""
    isort(a, n)
    if (what == "min") return a[1]
    if (what == "max") return a[n]
    if (n % 2) return a[(n + 1) / 2]
    return (a[n / 2] + a[n / 2 + 1]) / 2
}

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

function runs_cell(s, cl,    k) {
    k = s SUBSEP cl
    return (runs[k] + 0) (failed[k] ? " (+" failed[k] " FAILED)" : "")
}

function rate_cell(s, cl,    m) {
    m = stat(s, cl, 1, "med")
    if (m == "") return "n/a"
    if (runs[s SUBSEP cl] == 1) return fmt_int(m)
    return fmt_int(m) " (" fmt_int(stat(s, cl, 1, "min")) "–" fmt_int(stat(s, cl, 1, "max")) ")"
}

function lat_cell(s, cl, with_max) {
    if (stat(s, cl, 5, "med") == "") return "n/a"
    return fmt(stat(s, cl, 5, "med"), 2) " / " fmt(stat(s, cl, 6, "med"), 2) " / " \
           fmt(stat(s, cl, 7, "med"), 2) (with_max ? " / " fmt(stat(s, cl, 8, "med"), 1) : "")
}

# ratio of medians of column c: a's over b's, "" if either is missing.
function ratio(s1, a, s2, b, c,    x, y) {
    x = stat(s1, a, c, "med"); y = stat(s2, b, c, "med")
    if (x == "" || y == "" || y + 0 == 0) return ""
    return x / y
}

function throughput_section(s, title, kind,    i, cl, line, r, first) {
    if (!(s in seen)) return
    print "### " title
    print ""
    if (kind == "consume") {
        print "| client | records/s median (min–max) | MiB/s | CPU s | peak RSS MiB | poll ms p50 / p99 / p99.9 / max | runs |"
    } else {
        print "| client | records/s median (min–max) | MiB/s | CPU s | peak RSS MiB | latency ms p50 / p99 / p99.9 | runs |"
    }
    print "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
    for (i = 1; i <= nclients; i++) {
        cl = order[i]
        if (!have(s, cl) && !failed[s SUBSEP cl]) continue
        print "| " name[cl] " | " rate_cell(s, cl) " | " fmt(stat(s, cl, 2, "med"), 1) " | " \
              fmt(stat(s, cl, 3, "med"), 2) " | " fmt(stat(s, cl, 4, "med"), 1) " | " \
              lat_cell(s, cl, kind == "consume") " | " runs_cell(s, cl) " |"
    }
    print ""
    for (i = 1; i <= 3; i++) {
        cl = i == 1 ? "kn" : i == 2 ? "lua" : "luajit"
        if (!have(s, cl)) continue
        line = "**" name[cl] "**:"
        first = 1
        if (cl != "kn" && (r = ratio(s, cl, s, "kn", 1)) != "") { line = line " " sprintf("%.2f", r) " of C"; first = 0 }
        if ((r = ratio(s, cl, s, "java", 1)) != "") { line = line (first ? " " : ", ") sprintf("%.2fx", r) " Java"; first = 0 }
        if ((r = ratio(s, cl, s, "librdkafka", 1)) != "") { line = line (first ? " " : ", ") sprintf("%.2fx", r) " librdkafka"; first = 0 }
        if ((r = ratio(s, cl, s, "probe", 1)) != "") { line = line (first ? " " : ", ") sprintf("%.2f", r) " of the ceiling"; first = 0 }
        if (kind == "consume" && (r = ratio(s, cl, s, "java", 4)) != "") line = line "; peak RSS " sprintf("1/%.0f", 1 / r) " of Java's"
        if (cl == "kn" && s == "consume-10b-1000p") {
            if ((r = ratio(s, "kn", "consume-10b", "kn", 1)) != "") line = line "; " sprintf("%.2f", r) " of its 16-partition records/s"
        }
        print line " (records/s medians)."
        print ""
    }
}

BEGIN {
    FS = "\t"
    nclients = split("kn lua luajit java librdkafka probe", order, " ")
    name["kn"] = "kafka-native (C)"
    name["lua"] = "kafka-native (Lua 5.4)"
    name["luajit"] = "kafka-native (LuaJIT)"
    name["java"] = "Java client"
    name["librdkafka"] = "librdkafka"
    name["probe"] = "ceiling: fetch-and-discard probe"
    while ((getline l < settings) > 0) {
        eq = index(l, "=")
        if (eq) set[substr(l, 1, eq - 1)] = substr(l, eq + 1)
    }
}

{
    k = $1 SUBSEP $2
    seen[$1] = 1
    if ($4 == "FAILED") { failed[k]++; nfailed++; next }
    n = ++runs[k]
    for (c = 1; c <= 9; c++) val[k, n, c] = $(c + 3)
}

END {
    print "## Benchmark results"
    print ""
    print "Measured " set["date"] " on `" set["host"] "` (" set["cpu"] ", Linux " set["kernel"] "), " \
          set["mode"] " mode, " set["rounds"] " round(s) per client, clients interleaved; " \
          "broker: " set["broker"] ". Kafka " set["kafka"] ", librdkafka " set["librdkafka"] ", " set["java"] \
          ". Sizes: " set["sizes"] ". Commit " set["commit"] "."
    print ""
    print "Records/s and MiB/s (1 MiB = 1024² bytes of key + value; the probe counts whole record " \
          "batches) are each program's own figures; CPU s and peak RSS come from GNU time around " \
          "the process (JVM included). Java's consumer figure is ConsumerPerformance's " \
          "fetch.nMsg.sec (its group join excluded; the join is timed in *Group join*); ours and " \
          "librdkafka's " \
          (set["group_mode"] == "1" ? "subscribe to a fresh group too (their fetch-phase figures)" \
                                    : "use manual assignment of every partition") \
          ". Producers: acks=all, idempotence on, defaults otherwise. Numbers from a shared " \
          "machine are provisional."
    print ""
    if (nfailed) { print "**" nfailed " run(s) FAILED** (see raw.tsv and logs/)."; print "" }
    print "![records/s relative to the Java client](chart.png)"
    print ""

    # ---- targets ------------------------------------------------------
    print "### Targets (issues #3, #6, #7)"
    print ""
    print "| target | measured | met |"
    print "| --- | ---: | :---: |"
    target("consumer ≥ 3x Java, 10 B", ratio("consume-10b", "kn", "consume-10b", "java", 1), 3, "x")
    target("consumer ≥ 5x Java, 10 KiB", ratio("consume-10kib", "kn", "consume-10kib", "java", 1), 5, "x")
    target("consumer ≥ 1.2x librdkafka, 10 B", ratio("consume-10b", "kn", "consume-10b", "librdkafka", 1), 1.2, "x")
    target("consumer ≥ 1.2x librdkafka, 10 KiB", ratio("consume-10kib", "kn", "consume-10kib", "librdkafka", 1), 1.2, "x")
    target("consumer ≥ 0.9 of the ceiling, 10 KiB", ratio("consume-10kib", "kn", "consume-10kib", "probe", 1), 0.9, "")
    target("producer ≥ 1.6x Java, 10 B", ratio("produce-10b", "kn", "produce-10b", "java", 1), 1.6, "x")
    target("producer ≥ 1.2x librdkafka, 10 B", ratio("produce-10b", "kn", "produce-10b", "librdkafka", 1), 1.2, "x")
    target("producer ≥ 1.2x librdkafka, 10 KiB", ratio("produce-10kib", "kn", "produce-10kib", "librdkafka", 1), 1.2, "x")
    r = ratio("consume-10b", "kn", "consume-10b", "java", 4)
    target_max("consumer peak RSS < 1/20 of Java's, 10 B", r, 0.05)
    r = ratio("consume-10kib", "kn", "consume-10kib", "java", 4)
    target_max("consumer peak RSS < 1/20 of Java's, 10 KiB", r, 0.05)
    target("1,000 partitions ≥ 0.8 of 16-partition records/s", ratio("consume-10b-1000p", "kn", "consume-10b", "kn", 1), 0.8, "")
    target_max("1,000 partitions peak RSS ≤ 64 MiB", stat("consume-10b-1000p", "kn", 4, "med"), 64)
    target_max("idle consumer (1,000 partitions) < 1% of a core", stat("idle-1000p", "kn", 9, "med"), 1)
    target("Lua 5.4 consumer ≥ 0.5 of C, 10 B (issue #6)", ratio("consume-10b", "lua", "consume-10b", "kn", 1), 0.5, "")
    target("LuaJIT consumer ≥ 0.5 of C, 10 B (issue #6)", ratio("consume-10b", "luajit", "consume-10b", "kn", 1), 0.5, "")
    print ""

    throughput_section("consume-10b", "Consume 10 B records, 16 partitions", "consume")
    throughput_section("consume-10kib", "Consume 10 KiB records, 3 partitions", "consume")
    throughput_section("produce-10b", "Produce 10 B records to 16 partitions (acks=all, idempotent)", "produce")
    throughput_section("produce-10kib", "Produce 10 KiB records to 3 partitions (acks=all, idempotent)", "produce")
    throughput_section("consume-10b-1000p", "Scale: consume 10 B records from 1,000 partitions", "consume")

    if ("idle-1000p" in seen) {
        print "### Scale: idle consumer holding 1,000 partitions"
        print ""
        print "| client | CPU % of one core | CPU s in the window | peak RSS MiB |"
        print "| --- | ---: | ---: | ---: |"
        for (i = 1; i <= nclients; i++) {
            cl = order[i]
            if (!have("idle-1000p", cl) && !failed["idle-1000p" SUBSEP cl]) continue
            print "| " name[cl] " | " fmt(stat("idle-1000p", cl, 9, "med"), 2) " | " \
                  fmt(stat("idle-1000p", cl, 3, "med"), 2) " | " fmt(stat("idle-1000p", cl, 4, "med"), 1) " |"
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
            print "| " name[cl] " | " join_cell("group-join-classic", cl) " | " join_cell("group-join-consumer", cl) " |"
        }
        if (!have("group-join-classic", "kn"))
            print "\nOurs: not measured (bench/kn_group_join is not built yet)."
        print ""
    }
}

function join_cell(s, cl,    m) {
    m = stat(s, cl, 9, "med")
    if (m == "") return "n/a"
    if (runs[s SUBSEP cl] == 1) return fmt_int(m)
    return fmt_int(m) " (" fmt_int(stat(s, cl, 9, "min")) "–" fmt_int(stat(s, cl, 9, "max")) ")"
}

function target(what, r, want, unit) {
    if (r == "") { print "| " what " | not measured | – |"; return }
    print "| " what " | " sprintf("%.2f%s", r, unit) " | " (r >= want ? "yes" : "**no**") " |"
}

function target_max(what, r, limit) {
    if (r == "") { print "| " what " | not measured | – |"; return }
    print "| " what " | " (limit < 1 ? sprintf("1/%.0f", 1 / r) : sprintf("%.2f", r)) " | " (r < limit || (limit >= 1 && r <= limit) ? "yes" : "**no**") " |"
}
