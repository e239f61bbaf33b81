// Prints values computed by the Apache Kafka Java client (kafka-clients)
// that kafka-native must reproduce byte for byte: murmur2 and the keyed
// partition choice, CRC32C, and the zig-zag varint encodings.
//
// Built and run by tools/java/gen-known-answers, which writes
// tests/data/java-known-answers.txt. The file format and every input are
// described in the header this program prints (see HEADER below), so a C
// test can regenerate each input exactly.
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import org.apache.kafka.clients.producer.internals.BuiltInPartitioner;
import org.apache.kafka.common.utils.AppInfoParser;
import org.apache.kafka.common.utils.ByteUtils;
import org.apache.kafka.common.utils.Crc32C;
import org.apache.kafka.common.utils.Utils;

public final class KnownAnswers {
    static final long SEED = 0x6b61666b616e6174L; // "kafkanat"
    static final long MUL = 6364136223846793005L;
    static final long INC = 1442695040888963407L;
    static final int LCG_KEYS = 100_000;
    static final int MAX_PARTITIONS = 64;

    static final String HEADER = String.join("\n",
        "# kafka-native known answers, computed by the Java client (kafka-clients {VERSION}).",
        "# Regenerate: tools/java/gen-known-answers; verify: tools/java/gen-known-answers --check.",
        "# Lines starting with '#' are comments. '@NAME COUNT' starts a section of COUNT lines.",
        "# All numbers in hex are lowercase, unsigned, fixed width (8 digits for 32-bit values,",
        "# 16 for 64-bit); byte strings are hex, two digits per byte, '-' when empty.",
        "#",
        "# Inputs:",
        "#  fixed key of length L (L = 0..64): byte i = (i*7 + 3) & 0xff, i = 0..L-1.",
        "#  LCG: 64-bit state x, starting at x = 0x6b61666b616e6174; one step is",
        "#    x = x * 6364136223846793005 + 1442695040888963407 (mod 2^64).",
        "#  LCG key k (k = 0..99999), all keys drawn from one LCG in order: step, then",
        "#    length = 1 + ((x >> 33) % 64) (1..64); then for each byte: step, byte = x >> 56.",
        "#  LCG stream of N bytes: a fresh LCG (same start); for each byte: step, byte = x >> 56.",
        "#  fold over a sequence of values v (each taken as unsigned 64-bit):",
        "#    f = 0; for each v: f = f * 31 + v (mod 2^64).",
        "#",
        "# Sections:",
        "#  @murmur2-fixed: 'L murmur2 positive' for fixed key of length L, where murmur2 =",
        "#    Utils.murmur2(key) and positive = Utils.toPositive(murmur2) = murmur2 & 0x7fffffff.",
        "#  @crc32c-fixed: 'L crc' with crc = Crc32C.compute(fixed key of length L).",
        "#  @crc32c-stream: 'N crc' for the LCG stream of N bytes.",
        "#  @varint: 'kind value bytes', value in decimal; kind varint = ByteUtils.writeVarint",
        "#    (zig-zag int), varlong = ByteUtils.writeVarlong (zig-zag long), uvarint =",
        "#    ByteUtils.writeUnsignedVarint (value printed as unsigned 32-bit). The LCG values",
        "#    at the end come from a fresh LCG: step, v = x (varlong), step, v = (int)(x >> 32)",
        "#    (varint and uvarint).",
        "#  @murmur2-lcg: line k is Utils.murmur2(LCG key k).",
        "#  @partition-lcg: 'n sum fold' for n = 1..64, over all LCG keys in order, of the",
        "#    partition p = BuiltInPartitioner.partitionForKey(key, n) (checked equal to",
        "#    Utils.toPositive(Utils.murmur2(key)) % n) that the Java producer picks for a keyed record (no custom",
        "#    partitioner, partitioner.ignore.keys=false); sum is the plain sum (decimal).",
        "#  @crc32c-lcg: 'count fold' with fold over Crc32C.compute(LCG key k), k = 0..99999.",
        "");

    static long x;

    static long step() {
        x = x * MUL + INC;
        return x;
    }

    static byte[] fixedKey(int len) {
        byte[] b = new byte[len];
        for (int i = 0; i < len; i++) b[i] = (byte) ((i * 7 + 3) & 0xff);
        return b;
    }

    static String hex32(long v) {
        return String.format("%08x", v & 0xffffffffL);
    }

    static String hexBytes(ByteBuffer buf) {
        buf.flip();
        if (!buf.hasRemaining()) return "-";
        StringBuilder sb = new StringBuilder();
        while (buf.hasRemaining()) sb.append(String.format("%02x", buf.get() & 0xff));
        return sb.toString();
    }

    public static void main(String[] args) {
        StringBuilder out = new StringBuilder(1 << 21);
        out.append(HEADER.replace("{VERSION}", AppInfoParser.getVersion()));

        out.append("@murmur2-fixed 65\n");
        for (int len = 0; len <= 64; len++) {
            int h = Utils.murmur2(fixedKey(len));
            out.append(len).append(' ').append(hex32(h)).append(' ')
               .append(hex32(Utils.toPositive(h))).append('\n');
        }

        out.append("@crc32c-fixed 65\n");
        for (int len = 0; len <= 64; len++) {
            byte[] k = fixedKey(len);
            out.append(len).append(' ').append(hex32(Crc32C.compute(k, 0, k.length))).append('\n');
        }

        int[] sizes = {1, 3, 1024, 65536, 1048579};
        out.append("@crc32c-stream ").append(sizes.length).append('\n');
        for (int n : sizes) {
            x = SEED;
            byte[] b = new byte[n];
            for (int i = 0; i < n; i++) b[i] = (byte) (step() >>> 56);
            out.append(n).append(' ').append(hex32(Crc32C.compute(b, 0, n))).append('\n');
        }

        List<String> vl = new ArrayList<>();
        long[] longs = {0, 1, -1, 2, -2, 63, -64, 64, -65, 127, 128, 8191, -8192, 8192, -8193,
            (1L << 20) - 1, 1L << 20, (1L << 27) - 1, 1L << 27, Integer.MAX_VALUE, Integer.MIN_VALUE,
            1L << 34, 1L << 41, 1L << 48, 1L << 55, 1L << 62, -(1L << 62), Long.MAX_VALUE, Long.MIN_VALUE};
        int[] ints = {0, 1, -1, 2, -2, 63, -64, 64, -65, 127, 128, 255, 8191, -8192, 8192, -8193,
            (1 << 20) - 1, 1 << 20, (1 << 27) - 1, 1 << 27, 1 << 28, Integer.MAX_VALUE, Integer.MIN_VALUE};
        ByteBuffer buf = ByteBuffer.allocate(16);
        for (long v : longs) {
            buf.clear(); ByteUtils.writeVarlong(v, buf);
            vl.add("varlong " + v + " " + hexBytes(buf));
        }
        for (int v : ints) {
            buf.clear(); ByteUtils.writeVarint(v, buf);
            vl.add("varint " + v + " " + hexBytes(buf));
            buf.clear(); ByteUtils.writeUnsignedVarint(v, buf);
            vl.add("uvarint " + Integer.toUnsignedString(v) + " " + hexBytes(buf));
        }
        x = SEED;
        for (int i = 0; i < 100; i++) {
            long v = step();
            buf.clear(); ByteUtils.writeVarlong(v, buf);
            vl.add("varlong " + v + " " + hexBytes(buf));
            int w = (int) (step() >>> 32);
            buf.clear(); ByteUtils.writeVarint(w, buf);
            vl.add("varint " + w + " " + hexBytes(buf));
            buf.clear(); ByteUtils.writeUnsignedVarint(w, buf);
            vl.add("uvarint " + Integer.toUnsignedString(w) + " " + hexBytes(buf));
        }
        out.append("@varint ").append(vl.size()).append('\n');
        for (String s : vl) out.append(s).append('\n');

        long[] sum = new long[MAX_PARTITIONS + 1];
        long[] fold = new long[MAX_PARTITIONS + 1];
        long crcFold = 0;
        out.append("@murmur2-lcg ").append(LCG_KEYS).append('\n');
        x = SEED;
        for (int k = 0; k < LCG_KEYS; k++) {
            int len = 1 + (int) ((step() >>> 33) % 64);
            byte[] key = new byte[len];
            for (int i = 0; i < len; i++) key[i] = (byte) (step() >>> 56);
            int h = Utils.murmur2(key);
            out.append(hex32(h)).append('\n');
            for (int n = 1; n <= MAX_PARTITIONS; n++) {
                int p = BuiltInPartitioner.partitionForKey(key, n);
                if (p != Utils.toPositive(h) % n) throw new AssertionError("partitionForKey");
                sum[n] += p;
                fold[n] = fold[n] * 31 + p;
            }
            crcFold = crcFold * 31 + Crc32C.compute(key, 0, len);
        }
        out.append("@partition-lcg ").append(MAX_PARTITIONS).append('\n');
        for (int n = 1; n <= MAX_PARTITIONS; n++) {
            out.append(n).append(' ').append(sum[n]).append(' ')
               .append(String.format("%016x", fold[n])).append('\n');
        }
        out.append("@crc32c-lcg 1\n");
        out.append(LCG_KEYS).append(' ').append(String.format("%016x", crcFold)).append('\n');
        System.out.print(out);
        System.out.flush();
    }
}
