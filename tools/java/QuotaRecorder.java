// QuotaRecorder: a broker plugin for the tests (issue #18 item 4, KIP-219
// acceptance: "a throttled client's request rate stays within its quota,
// by the broker's own metrics"). A MetricsReporter, so the broker hands
// it every metric of its registry; it keeps the client quota sensors'
// metrics (ClientQuotaManager: groups Produce and Fetch, names byte-rate
// and throttle-time, tags user and client-id) and, every 100 ms, appends
// each one whose value changed to the file named by the broker property
// kn.quota.record.file, one line per value:
//   QUOTA time=<unix ms> node=<id> group=<Produce|Fetch> name=<byte-rate|throttle-time>
//         client_id=<id> user=<user> value=<double> quota=<bound or -> window_ms=<ms> samples=<n>
// quota, window_ms and samples are the metric's own MetricConfig: the
// bound the broker enforces and its quota.window.size.seconds and
// quota.window.num, so a reader needs no broker config.
// Only the MetricsReporter API (as old as Kafka 0.8.2) is used, so every
// broker version the harness runs loads it; the file is created at
// configure time, so its absence means the broker runs without it.
// Built and put on the broker's classpath by tools/java/quota-recorder
// and tools/kafka/broker; never part of the library.
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.metrics.KafkaMetric;
import org.apache.kafka.common.metrics.MetricConfig;
import org.apache.kafka.common.metrics.MetricsReporter;
import org.apache.kafka.common.metrics.Quota;

public class QuotaRecorder implements MetricsReporter {
    private static final long PERIOD_MS = 100;

    private volatile String path;
    private String node = "-";
    private final Map<MetricName, KafkaMetric> tracked = new ConcurrentHashMap<>();
    // Last value written per metric: only changes are appended, so an
    // idle client (or one without a quota) costs nothing in the file.
    private final Map<MetricName, Double> written = new ConcurrentHashMap<>();
    private ScheduledExecutorService timer;

    @Override
    public synchronized void configure(Map<String, ?> configs) {
        Object p = configs.get("kn.quota.record.file");
        path = p == null ? null : p.toString();
        Object n = configs.get("node.id");
        if (n == null) n = configs.get("broker.id");
        if (n != null) node = n.toString();
        if (path != null) append(""); // created now: present means recording
    }

    private static boolean isQuotaMetric(MetricName m) {
        String g = m.group(), n = m.name();
        return ("Produce".equals(g) || "Fetch".equals(g))
            && ("byte-rate".equals(n) || "throttle-time".equals(n))
            && m.tags().containsKey("client-id");
    }

    @Override
    public synchronized void init(List<KafkaMetric> metrics) {
        for (KafkaMetric m : metrics) metricChange(m);
        if (timer == null) {
            timer = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "kn-quota-recorder");
                t.setDaemon(true);
                return t;
            });
            timer.scheduleAtFixedRate(this::sample, PERIOD_MS, PERIOD_MS, TimeUnit.MILLISECONDS);
        }
    }

    @Override
    public void metricChange(KafkaMetric metric) {
        if (isQuotaMetric(metric.metricName())) tracked.put(metric.metricName(), metric);
    }

    @Override
    public void metricRemoval(KafkaMetric metric) {
        tracked.remove(metric.metricName());
        written.remove(metric.metricName());
    }

    @Override
    public synchronized void close() {
        if (timer != null) timer.shutdownNow();
        timer = null;
    }

    private void sample() {
        try {
            StringBuilder out = new StringBuilder();
            long now = System.currentTimeMillis();
            for (KafkaMetric m : tracked.values()) {
                Object v = m.metricValue();
                if (!(v instanceof Number)) continue;
                double value = ((Number) v).doubleValue();
                MetricName name = m.metricName();
                Double last = written.get(name);
                if (last != null && Double.compare(last, value) == 0) continue; // NaN too
                written.put(name, value);
                MetricConfig c = m.config();
                Quota q = c.quota();
                out.append("QUOTA time=").append(now).append(" node=").append(node)
                    .append(" group=").append(name.group()).append(" name=").append(name.name())
                    .append(" client_id=").append(name.tags().get("client-id"))
                    .append(" user=").append(name.tags().getOrDefault("user", ""))
                    .append(" value=").append(value)
                    .append(" quota=").append(q == null ? "-" : String.valueOf(q.bound()))
                    .append(" window_ms=").append(c.timeWindowMs())
                    .append(" samples=").append(c.samples()).append('\n');
            }
            if (out.length() > 0) append(out.toString());
        } catch (RuntimeException e) {
            // Never let one bad read stop the schedule.
            System.err.println("QuotaRecorder: " + e);
        }
    }

    private synchronized void append(String text) {
        if (path == null) return;
        try (Writer w = new OutputStreamWriter(new FileOutputStream(path, true), StandardCharsets.UTF_8)) {
            w.write(text);
        } catch (IOException e) {
            System.err.println("QuotaRecorder: cannot write " + path + ": " + e);
        }
    }
}
