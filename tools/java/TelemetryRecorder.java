// TelemetryRecorder: a broker plugin for the tests (issue #18 item 5,
// KIP-714). As a MetricsReporter that is also a Kafka 4.3
// ClientTelemetryExporterProvider, the broker hands it every client
// telemetry push it accepts; it decodes the OTLP MetricsData with the
// protobuf classes kafka-clients ships (shaded) and appends what it
// received to the file named by the broker property
// kn.telemetry.record.file, one line per push and one per data point:
//   PUSH instance=<id> client_id=<id> terminating=<bool> type=<content type> bytes=<n> points=<n>
//   POINT instance=<id> name=<metric> kind=<gauge|sum> temporality=<DELTA|CUMULATIVE|-> monotonic=<bool>
//         value=<double> start=<unix ns> time=<unix ns> attrs=<k=v;...> resource=<k=v;...>
//   BAD instance=<id> error=<why> hex=<payload>
// Built and put on the broker's classpath by tools/java/telemetry-recorder
// and tools/kafka/broker; never part of the library.
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.metrics.KafkaMetric;
import org.apache.kafka.common.metrics.MetricsReporter;
import org.apache.kafka.server.telemetry.ClientTelemetryContext;
import org.apache.kafka.server.telemetry.ClientTelemetryExporter;
import org.apache.kafka.server.telemetry.ClientTelemetryExporterProvider;
import org.apache.kafka.server.telemetry.ClientTelemetryPayload;
import org.apache.kafka.shaded.io.opentelemetry.proto.common.v1.KeyValue;
import org.apache.kafka.shaded.io.opentelemetry.proto.metrics.v1.Metric;
import org.apache.kafka.shaded.io.opentelemetry.proto.metrics.v1.MetricsData;
import org.apache.kafka.shaded.io.opentelemetry.proto.metrics.v1.NumberDataPoint;
import org.apache.kafka.shaded.io.opentelemetry.proto.metrics.v1.ResourceMetrics;
import org.apache.kafka.shaded.io.opentelemetry.proto.metrics.v1.ScopeMetrics;

public class TelemetryRecorder implements MetricsReporter, ClientTelemetryExporterProvider {
    private volatile String path;

    @Override
    public void configure(Map<String, ?> configs) {
        Object p = configs.get("kn.telemetry.record.file");
        path = p == null ? null : p.toString();
    }

    @Override public void init(List<KafkaMetric> metrics) {}
    @Override public void metricChange(KafkaMetric metric) {}
    @Override public void metricRemoval(KafkaMetric metric) {}
    @Override public void close() {}

    @Override
    public ClientTelemetryExporter clientTelemetryExporter() {
        return this::export;
    }

    private static String attrs(List<KeyValue> kvs) {
        StringBuilder sb = new StringBuilder();
        for (KeyValue kv : kvs) {
            if (sb.length() > 0) sb.append(';');
            sb.append(kv.getKey()).append('=').append(kv.getValue().getStringValue());
        }
        return sb.toString();
    }

    private static void point(StringBuilder out, String id, Metric m, String kind, String temporality,
                              boolean monotonic, NumberDataPoint dp, String resource) {
        double v = dp.hasAsInt() ? (double) dp.getAsInt() : dp.getAsDouble();
        out.append("POINT instance=").append(id).append(" name=").append(m.getName())
            .append(" kind=").append(kind).append(" temporality=").append(temporality)
            .append(" monotonic=").append(monotonic).append(" value=").append(v)
            .append(" start=").append(dp.getStartTimeUnixNano()).append(" time=").append(dp.getTimeUnixNano())
            .append(" attrs=").append(attrs(dp.getAttributesList()))
            .append(" resource=").append(resource).append('\n');
    }

    private synchronized void export(ClientTelemetryContext ctx, ClientTelemetryPayload payload) {
        String id = String.valueOf(payload.clientInstanceId());
        ByteBuffer data = payload.data().duplicate();
        byte[] bytes = new byte[data.remaining()];
        data.get(bytes);
        StringBuilder out = new StringBuilder();
        int points = 0;
        StringBuilder body = new StringBuilder();
        try {
            MetricsData md = MetricsData.parseFrom(bytes);
            for (ResourceMetrics rm : md.getResourceMetricsList()) {
                String resource = attrs(rm.getResource().getAttributesList());
                for (ScopeMetrics sm : rm.getScopeMetricsList()) {
                    for (Metric m : sm.getMetricsList()) {
                        if (m.hasGauge()) {
                            for (NumberDataPoint dp : m.getGauge().getDataPointsList()) {
                                point(body, id, m, "gauge", "-", false, dp, resource);
                                points++;
                            }
                        } else if (m.hasSum()) {
                            String t = m.getSum().getAggregationTemporality().name().replace("AGGREGATION_TEMPORALITY_", "");
                            for (NumberDataPoint dp : m.getSum().getDataPointsList()) {
                                point(body, id, m, "sum", t, m.getSum().getIsMonotonic(), dp, resource);
                                points++;
                            }
                        } else {
                            body.append("POINT instance=").append(id).append(" name=").append(m.getName())
                                .append(" kind=other\n");
                        }
                    }
                }
            }
        } catch (Exception e) {
            StringBuilder hex = new StringBuilder();
            for (byte b : bytes) hex.append(String.format("%02x", b));
            body.append("BAD instance=").append(id).append(" error=")
                .append(String.valueOf(e).replace(' ', '_')).append(" hex=").append(hex).append('\n');
        }
        String clientId = ctx.authorizableRequestContext() != null ? ctx.authorizableRequestContext().clientId() : "";
        out.append("PUSH instance=").append(id).append(" client_id=").append(clientId)
            .append(" terminating=").append(payload.isTerminating())
            .append(" type=").append(payload.contentType()).append(" bytes=").append(bytes.length)
            .append(" points=").append(points).append('\n').append(body);
        if (path == null) return;
        try (Writer w = new OutputStreamWriter(new FileOutputStream(path, true), StandardCharsets.UTF_8)) {
            w.write(out.toString());
        } catch (IOException e) {
            System.err.println("TelemetryRecorder: cannot write " + path + ": " + e);
        }
    }
}
