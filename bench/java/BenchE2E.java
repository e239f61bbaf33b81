// BenchE2E: the Java client's end-to-end latency at a fixed rate, the
// same measurement as bench/kn_e2e_latency.c (bench/bench_e2e.h): a
// producer thread sends --num-records 100-byte records at --throughput
// records/s to partition 0 (--producer-props k=v... for its settings),
// each carrying its send time (System.nanoTime() / 1000, little-endian in
// the value's first 8 bytes); the main thread's consumer, partition 0
// assigned from the beginning at Java's defaults, reads them; latency =
// receipt - send. The first second of records is not counted. Kafka's own
// org.apache.kafka.tools.EndToEndLatency sends one record at a time and
// waits for it instead, so its rate is set by the latency it measures.
//
//   BenchE2E --bootstrap-server H --topic T --num-records N --throughput R
//            [--timeout MS] [--producer-props k=v ...]
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public class BenchE2E {
    public static void main(String[] a) throws Exception {
        String bootstrap = null, topic = null;
        long num = -1, timeoutMs = 30000;
        double rate = 0;
        Properties pp = new Properties();
        for (int i = 0; i < a.length; i++) {
            switch (a[i]) {
                case "--bootstrap-server": bootstrap = a[++i]; break;
                case "--topic": topic = a[++i]; break;
                case "--num-records": num = Long.parseLong(a[++i]); break;
                case "--throughput": rate = Double.parseDouble(a[++i]); break;
                case "--timeout": timeoutMs = Long.parseLong(a[++i]); break;
                case "--producer-props":
                    while (i + 1 < a.length && !a[i + 1].startsWith("--")) {
                        String kv = a[++i];
                        int eq = kv.indexOf('=');
                        if (eq < 0) usage();
                        pp.put(kv.substring(0, eq), kv.substring(eq + 1));
                    }
                    break;
                default: usage();
            }
        }
        if (bootstrap == null || topic == null || num <= 0 || rate <= 0) usage();
        pp.put("bootstrap.servers", bootstrap);
        pp.putIfAbsent("client.id", "e2e-producer");
        Properties cp = new Properties();
        cp.put("bootstrap.servers", bootstrap);
        cp.put("client.id", "e2e-consumer");
        cp.put("auto.offset.reset", "earliest");
        cp.put("enable.auto.commit", "false");
        long skip = Math.min((long) rate, num / 2);
        long[] lat = new long[(int) num];
        int n = 0;
        long received = 0;
        AtomicReference<String> failure = new AtomicReference<>();
        TopicPartition tp = new TopicPartition(topic, 0);
        try (KafkaProducer<byte[], byte[]> producer =
                     new KafkaProducer<>(pp, new ByteArraySerializer(), new ByteArraySerializer());
             KafkaConsumer<byte[], byte[]> consumer =
                     new KafkaConsumer<>(cp, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            consumer.poll(Duration.ofMillis(1000)); // fetching before the first record is sent
            final String t = topic;
            final long count = num;
            final double r = rate;
            Thread sender = new Thread(() -> {
                long start = System.nanoTime();
                try {
                    for (long i = 0; i < count && failure.get() == null; i++) {
                        long due = start + (long) (i * 1e9 / r);
                        long wait;
                        while ((wait = due - System.nanoTime()) > 0) LockSupport.parkNanos(wait);
                        byte[] v = new byte[100];
                        Arrays.fill(v, (byte) 'x');
                        ByteBuffer.wrap(v).order(ByteOrder.LITTLE_ENDIAN).putLong(System.nanoTime() / 1000);
                        producer.send(new ProducerRecord<>(t, 0, null, v), (md, e) -> {
                            if (e != null) failure.compareAndSet(null, e.toString());
                        });
                    }
                    producer.flush();
                } catch (RuntimeException e) {
                    failure.compareAndSet(null, e.toString());
                }
            });
            sender.start();
            long last = System.nanoTime();
            while (received < num && (System.nanoTime() - last) / 1_000_000 <= timeoutMs) {
                var rs = consumer.poll(Duration.ofMillis(100));
                long now = System.nanoTime() / 1000;
                for (ConsumerRecord<byte[], byte[]> rec : rs) {
                    received++;
                    last = System.nanoTime();
                    if (received <= skip || n >= lat.length || rec.value().length < 8) continue;
                    lat[n++] = now - ByteBuffer.wrap(rec.value()).order(ByteOrder.LITTLE_ENDIAN).getLong();
                }
            }
            sender.join();
        }
        if (failure.get() != null) {
            System.err.println("BenchE2E: producer: " + failure.get());
            System.exit(1);
        }
        if (received < num) {
            System.err.println("BenchE2E: " + received + " of " + num + " records arrived");
            System.exit(1);
        }
        Arrays.sort(lat, 0, n);
        System.out.printf("e2e latency: %d records at %.1f records/sec, p50 %.3f ms, p99 %.3f ms, p99.9 %.3f ms, max %.3f ms%n",
                n, rate, pct(lat, n, 0.5), pct(lat, n, 0.99), pct(lat, n, 0.999), n > 0 ? lat[n - 1] / 1000.0 : 0.0);
    }

    static double pct(long[] lat, int n, double p) {
        if (n == 0) return 0;
        int i = (int) (p * n);
        return lat[Math.min(i, n - 1)] / 1000.0;
    }

    static void usage() {
        System.err.println("usage: BenchE2E --bootstrap-server H --topic T --num-records N --throughput R"
                + " [--timeout MS] [--producer-props k=v ...]");
        System.exit(2);
    }
}
