/*
 * RecordBatchCheck: the Java client's side of the record batch
 * compatibility test (tests/c/test_record_batch_java.c).
 *
 *   read FILE   parse FILE (a records blob: batches back to back) with the
 *               Java client's MemoryRecords, validate every batch (CRC,
 *               sizes) and print every batch and record in the dump
 *               format below
 *   write FILE  build batches with the Java client's MemoryRecordsBuilder
 *               (every compression type, a transactional batch, an
 *               end-transaction marker, a LogAppendTime batch), write them
 *               to FILE and print them in the same dump format
 *
 * Dump format (one line each; byte strings are lowercase hex, "-" when
 * empty, "null" when null):
 *   batch BASE LAST COUNT CODEC LOGAPPENDTIME TXN CONTROL PID EPOCH SEQ LEADEREPOCH MAXTS
 *   record OFFSET TIMESTAMP KEY VALUE NHEADERS [HKEY=HVALUE ...]
 *   end BATCHES
 * The C test prints the same format from its own decoder and compares.
 * Run through tools/java/record-batch-check, which compiles this file.
 */
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;

public class RecordBatchCheck {
    static String hex(ByteBuffer b) {
        if (b == null) return "null";
        b = b.duplicate();
        if (!b.hasRemaining()) return "-";
        StringBuilder sb = new StringBuilder();
        while (b.hasRemaining()) sb.append(String.format("%02x", b.get() & 0xff));
        return sb.toString();
    }

    static String hex(byte[] b) {
        return b == null ? "null" : hex(ByteBuffer.wrap(b));
    }

    static void dump(MemoryRecords records, PrintStream out) {
        int n = 0;
        for (RecordBatch batch : records.batches()) {
            batch.ensureValid();
            out.printf("batch %d %d %d %d %d %d %d %d %d %d %d %d%n", batch.baseOffset(),
                    batch.lastOffset(), batch.countOrNull(), batch.compressionType().id,
                    batch.timestampType() == TimestampType.LOG_APPEND_TIME ? 1 : 0,
                    batch.isTransactional() ? 1 : 0, batch.isControlBatch() ? 1 : 0,
                    batch.producerId(), batch.producerEpoch(), batch.baseSequence(),
                    batch.partitionLeaderEpoch(), batch.maxTimestamp());
            for (Record r : batch) {
                r.ensureValid();
                StringBuilder sb = new StringBuilder();
                sb.append("record ").append(r.offset()).append(' ').append(r.timestamp())
                        .append(' ').append(r.hasKey() ? hex(r.key()) : "null")
                        .append(' ').append(r.hasValue() ? hex(r.value()) : "null")
                        .append(' ').append(r.headers().length);
                for (Header h : r.headers())
                    sb.append(' ').append(hex(h.key().getBytes(StandardCharsets.UTF_8)))
                            .append('=').append(hex(h.value()));
                out.println(sb);
            }
            n++;
        }
        out.println("end " + n);
    }

    static byte[] bytes(String s) {
        return s == null ? null : s.getBytes(StandardCharsets.UTF_8);
    }

    /* The records of every built batch; the C test rebuilds batch 0
     * (uncompressed) from the same rule to compare bytes. */
    static void appendRecords(MemoryRecordsBuilder b, long baseOffset, int count) {
        for (int i = 0; i < count; i++) {
            String key = i % 3 == 0 ? null : i == 1 ? "" : "key-" + i;
            String value = i % 4 == 0 ? null : i == 2 ? "" : "value-" + i + "-" + "x".repeat(i * 10);
            long ts = 1700000000000L + i * 7 - (i == 3 ? 100 : 0);
            Header[] headers = i % 2 == 1
                    ? new Header[] {new RecordHeader("h1", bytes("v" + i)), new RecordHeader("h2", null)}
                    : new Header[0];
            b.appendWithOffset(baseOffset + i * 2L, ts, bytes(key), bytes(value), headers);
        }
    }

    static ByteBuffer build(Compression c, TimestampType tt, long base, long logAppendTime,
                            long pid, short epoch, int seq, boolean txn, int leaderEpoch, int count) {
        ByteBuffer buf = ByteBuffer.allocate(1 << 20);
        MemoryRecordsBuilder b = MemoryRecords.builder(buf, RecordBatch.MAGIC_VALUE_V2, c, tt,
                base, logAppendTime, pid, epoch, seq, txn, false, leaderEpoch);
        appendRecords(b, base, count);
        return b.build().buffer();
    }

    static void write(String file) throws Exception {
        List<ByteBuffer> parts = new ArrayList<>();
        /* batch 0: uncompressed, idempotent producer fields */
        parts.add(build(Compression.NONE, TimestampType.CREATE_TIME, 0, RecordBatch.NO_TIMESTAMP,
                1234L, (short) 5, 100, false, 11, 10));
        Compression[] cs = {Compression.gzip().build(), Compression.snappy().build(),
                Compression.lz4().build(), Compression.zstd().build()};
        long base = 100;
        for (Compression c : cs) {
            parts.add(build(c, TimestampType.CREATE_TIME, base, RecordBatch.NO_TIMESTAMP,
                    RecordBatch.NO_PRODUCER_ID, RecordBatch.NO_PRODUCER_EPOCH,
                    RecordBatch.NO_SEQUENCE, false, RecordBatch.NO_PARTITION_LEADER_EPOCH, 200));
            base += 1000;
        }
        /* transactional batch, then its commit marker */
        parts.add(build(Compression.NONE, TimestampType.CREATE_TIME, base, RecordBatch.NO_TIMESTAMP,
                77L, (short) 2, 0, true, 3, 3));
        parts.add(MemoryRecords.withEndTransactionMarker(base + 10, 1700000009999L, 3, 77L, (short) 2,
                new EndTransactionMarker(ControlRecordType.COMMIT, 4)).buffer());
        parts.add(MemoryRecords.withEndTransactionMarker(base + 11, 1700000009999L, 3, 77L, (short) 2,
                new EndTransactionMarker(ControlRecordType.ABORT, 4)).buffer());
        /* LogAppendTime, as a broker rewrites it */
        parts.add(build(Compression.lz4().build(), TimestampType.LOG_APPEND_TIME, base + 20,
                1700000055555L, RecordBatch.NO_PRODUCER_ID, RecordBatch.NO_PRODUCER_EPOCH,
                RecordBatch.NO_SEQUENCE, false, 3, 4));
        int total = 0;
        for (ByteBuffer p : parts) total += p.remaining();
        ByteBuffer all = ByteBuffer.allocate(total);
        for (ByteBuffer p : parts) all.put(p.duplicate());
        all.flip();
        byte[] out = new byte[all.remaining()];
        all.duplicate().get(out);
        Files.write(Paths.get(file), out);
        dump(MemoryRecords.readableRecords(all), System.out);
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2 || !(args[0].equals("read") || args[0].equals("write"))) {
            System.err.println("usage: RecordBatchCheck read|write FILE");
            System.exit(2);
        }
        if (args[0].equals("read")) {
            byte[] data = Files.readAllBytes(Paths.get(args[1]));
            dump(MemoryRecords.readableRecords(ByteBuffer.wrap(data)), System.out);
        } else {
            write(args[1]);
        }
    }
}
