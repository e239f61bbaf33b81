// BenchConsumer: the Java client's consumer for bench/run (issue #17),
// reading every key and value into the same checksum as bench/bench_check.h
// and checking offsets per partition, which ConsumerPerformance cannot do
// (it only counts bytes). The Java client at its own defaults (byte-array
// deserializers, auto.offset.reset=earliest, enable.auto.commit=false,
// client.id perf-consumer-client), subscribed in a fresh group.
//
//   BenchConsumer --bootstrap-server H --topic T --num-records N --group G
//                 [--timeout MS] [--min-seconds S] [--command-property k=v]...
//
// Pass 1 reads the N records after the group join (a cold JVM: classes
// loading, code interpreted). Then, in the same JVM (warmed by the pass
// before), warm passes seek back to the beginning of every assigned
// partition and read them again until their reading time adds up to S
// seconds (at least one warm pass), as bench/bench_check.h's "Windows"
// (each pass timed from its first record to its last):
//   java cold: N records, R records/sec, M MiB/sec, E s, cpu C s
//   window P passes, N records, E s, R records/sec, M MiB/sec, cpu C s
// (cpu: the JVM's process CPU time over those passes), then the checksum
// line of the first pass, and "checksum mismatch" when a later pass read
// something else. Exit 1 on a short read, an offset error or a mismatch.
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public class BenchConsumer {
    static final long PRIME = 0x100000001b3L;

    static long fold(long h, long w) {
        return (h ^ w) * PRIME;
    }

    static long bytes(long h, byte[] b) {
        if (b == null) return fold(h, -1L);
        int n = b.length, i = 0;
        for (; i + 8 <= n; i += 8) {
            long w = (b[i] & 0xffL) | (b[i + 1] & 0xffL) << 8 | (b[i + 2] & 0xffL) << 16
                    | (b[i + 3] & 0xffL) << 24 | (b[i + 4] & 0xffL) << 32 | (b[i + 5] & 0xffL) << 40
                    | (b[i + 6] & 0xffL) << 48 | (b[i + 7] & 0xffL) << 56;
            h = fold(h, w);
        }
        if (i < n) {
            long w = 0;
            for (int s = 0; i < n; i++, s += 8) w |= (b[i] & 0xffL) << s;
            h = fold(h, w);
        }
        return fold(h, n);
    }

    static final class Check {
        long sum, records, errors;
        final Map<Integer, Long> next = new HashMap<>();
        String first = "";

        void add(ConsumerRecord<byte[], byte[]> r) {
            long h = 0xcbf29ce484222325L;
            h = bytes(h, r.key());
            h = bytes(h, r.value());
            sum += h;
            records++;
            Long want = next.get(r.partition());
            if (want != null && r.offset() != want && errors++ == 0)
                first = "partition " + r.partition() + ": offset " + r.offset() + " after " + (want - 1)
                        + (r.offset() > want ? " (records skipped)" : " (records repeated)");
            next.put(r.partition(), r.offset() + 1);
        }

        String line() {
            return String.format("checksum %d records, sum 0x%016x, partitions %d, offset errors %d",
                    records, sum, next.size(), errors);
        }
    }

    public static void main(String[] a) throws Exception {
        String bootstrap = null, topic = null, group = null;
        long num = -1, timeoutMs = 30000;
        double minSeconds = 0;
        Properties p = new Properties();
        for (int i = 0; i < a.length; i++) {
            String k = a[i], v = i + 1 < a.length ? a[i + 1] : null;
            if (v == null) usage();
            switch (k) {
                case "--bootstrap-server": bootstrap = v; break;
                case "--topic": topic = v; break;
                case "--num-records": num = Long.parseLong(v); break;
                case "--group": group = v; break;
                case "--timeout": timeoutMs = Long.parseLong(v); break;
                case "--min-seconds": minSeconds = Double.parseDouble(v); break;
                case "--command-property": {
                    int eq = v.indexOf('=');
                    if (eq < 0) usage();
                    p.put(v.substring(0, eq), v.substring(eq + 1));
                    break;
                }
                default: usage();
            }
            i++;
        }
        if (bootstrap == null || topic == null || group == null || num < 0) usage();
        p.putIfAbsent("bootstrap.servers", bootstrap);
        p.putIfAbsent("group.id", group);
        p.putIfAbsent("auto.offset.reset", "earliest");
        p.putIfAbsent("enable.auto.commit", "false");
        p.putIfAbsent("client.id", "perf-consumer-client");
        boolean ok = true;
        Check firstCheck = null;
        try (KafkaConsumer<byte[], byte[]> c =
                     new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            c.subscribe(List.of(topic));
            long joinStart = System.nanoTime();
            long warmNs = 0, warmRecords = 0, warmBytes = 0, warmCpu = 0;
            int warmPasses = 0;
            for (int pass = 1; ok && (pass <= 2 || warmNs / 1e9 < minSeconds); pass++) {
                Check check = new Check();
                if (pass > 1) c.seekToBeginning(c.assignment());
                long start = 0, last = System.nanoTime(), bytes = 0, cpu0 = 0;
                while (check.records < num && (System.nanoTime() - last) / 1_000_000 <= timeoutMs) {
                    ConsumerRecords<byte[], byte[]> rs = c.poll(Duration.ofMillis(100));
                    if (rs.isEmpty()) continue;
                    long now = System.nanoTime();
                    if (start == 0) {
                        start = now;
                        cpu0 = cpuNs();
                        if (pass == 1)
                            System.out.printf("java join: %.1f ms to the first records%n",
                                    (now - joinStart) / 1e6);
                    }
                    last = now;
                    for (ConsumerRecord<byte[], byte[]> r : rs) {
                        check.add(r);
                        bytes += (r.key() == null ? 0 : r.key().length)
                                + (r.value() == null ? 0 : r.value().length);
                        if (check.records == num) break; // the rest is another pass's
                    }
                    if (check.records == num) last = System.nanoTime();
                }
                long cpu = start == 0 ? 0 : cpuNs() - cpu0;
                double s = start == 0 ? 1e-6 : Math.max((last - start) / 1e9, 1e-6);
                if (check.records < num) {
                    System.out.printf("WARNING: Exiting before consuming the expected number of messages:"
                            + " %d of %d in pass %d, timeout (%d ms) exceeded.%n", check.records, num, pass,
                            timeoutMs);
                    ok = false;
                }
                if (pass == 1) {
                    System.out.printf("java cold: %d records, %.1f records/sec, %.4f MiB/sec, %.3f s, cpu %.3f s%n",
                            check.records, check.records / s, bytes / 1048576.0 / s, s, cpu / 1e9);
                } else {
                    warmPasses++;
                    warmNs += last - start;
                    warmRecords += check.records;
                    warmBytes += bytes;
                    warmCpu += cpu;
                }
                if (check.errors > 0) {
                    System.out.println("OFFSET ERROR: " + check.first);
                    ok = false;
                }
                if (firstCheck == null) {
                    firstCheck = check;
                } else if (check.sum != firstCheck.sum || check.records != firstCheck.records) {
                    System.out.println("checksum mismatch: pass " + pass + " " + check.line());
                    ok = false;
                }
            }
            double ws = Math.max(warmNs / 1e9, 1e-6);
            System.out.printf("window %d passes, %d records, %.3f s, %.1f records/sec, %.4f MiB/sec, cpu %.3f s%n",
                    warmPasses, warmRecords, ws, warmRecords / ws, warmBytes / 1048576.0 / ws, warmCpu / 1e9);
        }
        if (firstCheck != null) System.out.println(firstCheck.line());
        System.exit(ok ? 0 : 1);
    }

    static long cpuNs() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    static void usage() {
        System.err.println("usage: BenchConsumer --bootstrap-server H --topic T --num-records N --group G"
                + " [--timeout MS] [--min-seconds S] [--command-property k=v]...");
        System.exit(2);
    }
}
