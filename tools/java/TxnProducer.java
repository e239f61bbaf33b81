// TxnProducer: writes transactional data with the Java producer, for the
// consumer's read_committed acceptance test (tests/c/it_consumer_txn.c).
//
//   TxnProducer BOOTSTRAP TOPIC PARTITIONS PRODUCERS TRANSACTIONS RECORDS
//
// PRODUCERS transactional producers (transactional.id "kn-txn-TOPIC-i")
// run at once, so their transactions interleave in the log. Producer i
// writes TRANSACTIONS transactions of RECORDS records each; record j of
// transaction t has key "p<i>" and value "p<i>-t<t>-r<j>" and goes to
// partition (i + t + j) % PARTITIONS. A transaction is aborted when
// (i + t) % 3 == 0 and committed otherwise, so every partition holds
// committed and aborted spans of several producers side by side. The
// last transaction of every producer is committed, so the last stable
// offset reaches the log end. Prints one line per producer when done.
import java.util.Properties;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

public class TxnProducer {
    public static boolean aborted(int producer, int txn, int txns) {
        return txn != txns - 1 && (producer + txn) % 3 == 0;
    }

    public static void main(String[] a) throws Exception {
        if (a.length != 6) {
            System.err.println("usage: TxnProducer BOOTSTRAP TOPIC PARTITIONS PRODUCERS TRANSACTIONS RECORDS");
            System.exit(2);
        }
        String bootstrap = a[0], topic = a[1];
        int parts = Integer.parseInt(a[2]), producers = Integer.parseInt(a[3]);
        int txns = Integer.parseInt(a[4]), records = Integer.parseInt(a[5]);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread[] threads = new Thread[producers];
        for (int i = 0; i < producers; i++) {
            final int id = i;
            threads[i] = new Thread(() -> {
                Properties p = new Properties();
                p.put("bootstrap.servers", bootstrap);
                p.put("transactional.id", "kn-txn-" + topic + "-" + id);
                p.put("linger.ms", "2");
                p.put("key.serializer", StringSerializer.class.getName());
                p.put("value.serializer", StringSerializer.class.getName());
                try (KafkaProducer<String, String> pr = new KafkaProducer<>(p)) {
                    pr.initTransactions();
                    int committed = 0;
                    for (int t = 0; t < txns; t++) {
                        pr.beginTransaction();
                        for (int j = 0; j < records; j++)
                            pr.send(new ProducerRecord<>(topic, (id + t + j) % parts, "p" + id,
                                                         "p" + id + "-t" + t + "-r" + j));
                        pr.flush();
                        if (aborted(id, t, txns)) {
                            pr.abortTransaction();
                        } else {
                            pr.commitTransaction();
                            committed++;
                        }
                    }
                    System.out.println("producer " + id + ": " + committed + " of " + txns
                                       + " transactions committed");
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            });
            threads[i].start();
        }
        for (Thread t : threads)
            t.join();
        if (failure.get() != null) {
            failure.get().printStackTrace();
            System.exit(1);
        }
    }
}
