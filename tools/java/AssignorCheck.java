// Prints what the Java client (kafka-clients) assigns, scenario by
// scenario, with its four built-in assignors (range, roundrobin, sticky,
// cooperative-sticky), and the consumer-protocol blobs it writes, so that
// tests/c/test_assignor_java.c can check kafka-native's assignors and
// blob codecs against them.
//
// Built and run by tools/java/gen-assignor-answers, which writes
// tests/data/java-assignor-answers.txt. Every scenario's inputs are
// printed in full (the C test reads them, it does not re-run the
// generator); the generator is described in HEADER below.
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.consumer.RoundRobinAssignor;
import org.apache.kafka.clients.consumer.StickyAssignor;
import org.apache.kafka.clients.consumer.internals.AbstractStickyAssignor.MemberData;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.AppInfoParser;

public final class AssignorCheck {
    static final long SEED = 0x61737369676e6f72L; // "assignor"
    static final long MUL = 6364136223846793005L;
    static final long INC = 1442695040888963407L;
    static final int SCENARIOS = 300;
    static final int CHAINS = 40;
    static final int ROUNDS = 4;
    static final int SKEWED = 80;
    static final int BLOB_SCENARIOS = 12;
    static final String[] ASSIGNORS = {"range", "roundrobin", "sticky", "cooperative-sticky"};

    static final String HEADER = String.join("\n",
        "# kafka-native assignor answers, computed by the Java client (kafka-clients {VERSION}).",
        "# Regenerate: tools/java/gen-assignor-answers; verify: tools/java/gen-assignor-answers --check.",
        "# Lines starting with '#' are comments. Hex is lowercase, '-' is null, '.' is empty.",
        "#",
        "# Generator (LCG as in java-known-answers.txt: x = x * 6364136223846793005 +",
        "# 1442695040888963407 mod 2^64, starting at 0x61737369676e6f72; r(n) = (step() >>> 33) % n).",
        "# Per scenario: kind = r(2) (0 eager, 1 cooperative); members = 1 + r(8); topics = 1 + r(6),",
        "# topic i named t<i> with 1 + r(24) partitions, absent from the cluster when r(12) == 0;",
        "# racks when r(4) == 0: nodes 0..2 on racks r0..r2, node 3 without rack, each partition",
        "# on 1 + r(3) distinct nodes; member m is m<r(1000)>-<m>, with instance id i<r(100)>-<m>",
        "# when r(5) == 0, rack r<r(3)> when racks and r(4) != 0; subscriptions: all topics when",
        "# r(2) == 0, else each topic when r(2) == 0 (at least one); generation -1 when r(5) == 0",
        "# else 1 + r(3); prior owners: each partition of each cluster topic is unowned when",
        "# r(3) == 0, else owned by member r(n), plus a second claimer r(n) when r(6) == 0.",
        "# Eager members send their prior partitions in sticky user data (none: null) with an",
        "# empty owned list, subscription generation -1 when r(3) == 0; cooperative members send",
        "# them as owned partitions with the generation, and user data = the int32 generation",
        "# when r(2) == 0, else null. Each assignor runs on a fresh instance through",
        "# assign(Cluster, GroupSubscription), the subscriptions in a HashMap filled in member order.",
        "#",
        "# Lines:",
        "# Then CHAINS = 40 chains of ROUNDS = 4 rebalances each (scenarios numbered on): kind = r(2);",
        "# members = 2 + r(19) named c<r(1000)>-<k> (k counts members created in the chain);",
        "# topics = 1 + r(3), 1 + r(60) partitions, all present; racks when r(4) == 0 as above;",
        "# subscriptions all topics when the chain's r(2) == 0, else per member each topic when",
        "# r(2) == 0 (at least one). Round 0 has no prior owners. Before each later round:",
        "# r(3) == 0 removes member r(n) (if n > 1), r(3) == 1 adds a member, else member r(n)",
        "# resubscribes (as above, per topic); then every member that was in the last round",
        "# owns what the chain's assignor (sticky for eager chains, cooperative-sticky for",
        "# cooperative ones) gave it, with generation = round; new members have none",
        "# (generation -1). Member fields are then encoded as for the scenarios above.",
        "#",
        "# Then SKEWED = 80 scenarios (numbered on) where two members own everything: kind = r(2);",
        "# members = 3 + r(8) named s<r(1000)>-<m>, subscribing per topic as in chains; topics =",
        "# 2 + r(3) with 8 + r(40) partitions; racks when r(3) == 0, each partition on 1 + r(2)",
        "# distinct nodes; each partition is owned by member r(2) (generation 2) and, when",
        "# r(4) == 0, also claimed by member 2 + r(n - 2) (generation 1).",
        "#",
        "#  @scenario N KIND",
        "#  T topic count racks      racks: '-' or per partition '/'-separated comma lists ('.' none)",
        "#  M id instance rack topics generation owned userdata   (topics comma list; owned t:p list)",
        "#  A assignor member partitions     (sorted t:p list; Java's list order is not compared)",
        "#  @blobs",
        "#  SUB version topics owned generation rack userdata hex  (ConsumerProtocol.serializeSubscription)",
        "#  ASN version partitions userdata hex  (serializeAssignment, partitions in the listed order)",
        "#  STK generation partitions hex       (StickyAssignor.serializeTopicPartitionAssignment)",
        "");

    static long x = SEED;

    static long step() {
        x = x * MUL + INC;
        return x;
    }

    static int r(int n) {
        return (int) Long.remainderUnsigned(step() >>> 33, n);
    }

    static String hex(ByteBuffer b) {
        if (b == null) return "-";
        ByteBuffer d = b.duplicate();
        if (!d.hasRemaining()) return ".";
        StringBuilder sb = new StringBuilder();
        while (d.hasRemaining()) sb.append(String.format("%02x", d.get() & 0xff));
        return sb.toString();
    }

    static String tps(List<TopicPartition> l) {
        if (l.isEmpty()) return ".";
        StringBuilder sb = new StringBuilder();
        for (TopicPartition tp : l) {
            if (sb.length() > 0) sb.append(',');
            sb.append(tp.topic()).append(':').append(tp.partition());
        }
        return sb.toString();
    }

    static String joined(List<String> l) {
        return l.isEmpty() ? "." : String.join(",", l);
    }

    static List<TopicPartition> sorted(List<TopicPartition> l) {
        List<TopicPartition> s = new ArrayList<>(l);
        s.sort((a, b) -> {
            int c = a.topic().compareTo(b.topic());
            return c != 0 ? c : Integer.compare(a.partition(), b.partition());
        });
        return s;
    }

    static Method stickySerialize;

    static ByteBuffer stickyUserData(List<TopicPartition> parts, int generation) throws Exception {
        return (ByteBuffer) stickySerialize.invoke(null, new MemberData(parts, Optional.of(generation)));
    }

    static ConsumerPartitionAssignor assignor(String name) {
        switch (name) {
            case "range": return new RangeAssignor();
            case "roundrobin": return new RoundRobinAssignor();
            case "sticky": return new StickyAssignor();
            default: return new CooperativeStickyAssignor();
        }
    }

    static final class Member {
        String id;
        String instance;
        String rack;
        List<String> topics = new ArrayList<>();
        int generation;
        List<TopicPartition> prior = new ArrayList<>();
        Subscription sub;
    }

    // Prints one scenario (members as given, prior partitions as owned or
    // sticky user data) and every assignor's answer; returns what the
    // chain's assignor (sticky or cooperative-sticky) gave each member.
    static Map<String, List<TopicPartition>> runRound(StringBuilder out, int sid, boolean coop, StringBuilder tlines,
                                                     Cluster cluster, List<Member> members) throws Exception {
        Map<String, Subscription> subs = new HashMap<>();
        out.append("@scenario ").append(sid).append(coop ? " cooperative\n" : " eager\n").append(tlines);
        for (Member mb : members) {
            ByteBuffer ud;
            List<TopicPartition> owned;
            if (coop) {
                owned = mb.prior;
                ud = null;
            } else {
                owned = Collections.emptyList();
                ud = mb.prior.isEmpty() && mb.generation < 0 ? null : stickyUserData(mb.prior, mb.generation);
            }
            mb.sub = new Subscription(mb.topics, ud, owned, mb.generation, Optional.ofNullable(mb.rack));
            subs.put(mb.id, mb.sub);
            out.append("M ").append(mb.id).append(" - ").append(mb.rack == null ? "-" : mb.rack).append(' ')
               .append(joined(mb.topics)).append(' ').append(mb.generation).append(' ').append(tps(owned))
               .append(' ').append(hex(ud)).append('\n');
        }
        Map<String, List<TopicPartition>> next = new HashMap<>();
        for (String name : ASSIGNORS) {
            Map<String, Assignment> result;
            try {
                result = assignor(name).assign(cluster, new GroupSubscription(subs)).groupAssignment();
            } catch (RuntimeException e) {
                out.append("E ").append(name).append(' ').append(e.getClass().getSimpleName()).append('\n');
                continue;
            }
            for (Member mb : members) {
                List<TopicPartition> parts = result.get(mb.id).partitions();
                out.append("A ").append(name).append(' ').append(mb.id).append(' ')
                   .append(tps(sorted(parts))).append('\n');
                if (name.equals(coop ? "cooperative-sticky" : "sticky")) next.put(mb.id, new ArrayList<>(parts));
            }
        }
        return next;
    }

    static Member chainMember(int k, boolean racks, boolean allTopics, List<String> topicNames) {
        Member mb = new Member();
        mb.id = "c" + r(1000) + "-" + k;
        if (racks && r(4) != 0) mb.rack = "r" + r(3);
        if (allTopics) {
            mb.topics.addAll(topicNames);
        } else {
            for (String t : topicNames) if (r(2) == 0) mb.topics.add(t);
            if (mb.topics.isEmpty()) mb.topics.add(topicNames.get(r(topicNames.size())));
        }
        mb.generation = -1;
        return mb;
    }

    public static void main(String[] args) throws Exception {
        stickySerialize = StickyAssignor.class.getDeclaredMethod("serializeTopicPartitionAssignment", MemberData.class);
        stickySerialize.setAccessible(true);
        StringBuilder out = new StringBuilder(1 << 21);
        out.append(HEADER.replace("{VERSION}", AppInfoParser.getVersion()));
        List<String> blobs = new ArrayList<>();
        Node[] nodes = {new Node(0, "h0", 9092, "r0"), new Node(1, "h1", 9092, "r1"),
            new Node(2, "h2", 9092, "r2"), new Node(3, "h3", 9092)};

        for (int s = 0; s < SCENARIOS; s++) {
            boolean coop = r(2) == 1;
            int nm = 1 + r(8);
            int ntopics = 1 + r(6);
            boolean racks = false;
            List<String> topicNames = new ArrayList<>();
            List<Integer> counts = new ArrayList<>();
            List<Boolean> present = new ArrayList<>();
            for (int t = 0; t < ntopics; t++) {
                topicNames.add("t" + t);
                counts.add(1 + r(24));
                present.add(r(12) != 0);
            }
            racks = r(4) == 0;
            List<PartitionInfo> infos = new ArrayList<>();
            StringBuilder tlines = new StringBuilder();
            for (int t = 0; t < ntopics; t++) {
                if (!present.get(t)) continue;
                List<String> prs = new ArrayList<>();
                for (int p = 0; p < counts.get(t); p++) {
                    Node[] reps;
                    if (racks) {
                        int nr = 1 + r(3);
                        List<Integer> pool = new ArrayList<>(Arrays.asList(0, 1, 2, 3));
                        reps = new Node[nr];
                        List<String> rn = new ArrayList<>();
                        for (int k = 0; k < nr; k++) {
                            reps[k] = nodes[pool.remove(r(pool.size()))];
                            if (reps[k].hasRack()) rn.add(reps[k].rack());
                        }
                        prs.add(rn.isEmpty() ? "." : String.join(",", rn));
                    } else {
                        reps = new Node[] {nodes[3]};
                    }
                    infos.add(new PartitionInfo(topicNames.get(t), p, reps[0], reps, reps));
                }
                tlines.append("T ").append(topicNames.get(t)).append(' ').append(counts.get(t)).append(' ')
                      .append(racks ? String.join("/", prs) : "-").append('\n');
            }
            Cluster cluster = new Cluster("c", Arrays.asList(nodes), infos, Collections.emptySet(), Collections.emptySet());

            List<Member> members = new ArrayList<>();
            for (int m = 0; m < nm; m++) {
                Member mb = new Member();
                mb.id = "m" + r(1000) + "-" + m;
                if (r(5) == 0) mb.instance = "i" + r(100) + "-" + m;
                if (racks && r(4) != 0) mb.rack = "r" + r(3);
                if (r(2) == 0) {
                    mb.topics.addAll(topicNames);
                } else {
                    for (String t : topicNames) if (r(2) == 0) mb.topics.add(t);
                    if (mb.topics.isEmpty()) mb.topics.add(topicNames.get(r(ntopics)));
                }
                mb.generation = r(5) == 0 ? -1 : 1 + r(3);
                members.add(mb);
            }
            for (int t = 0; t < ntopics; t++) {
                if (!present.get(t)) continue;
                for (int p = 0; p < counts.get(t); p++) {
                    if (r(3) == 0) continue;
                    int a = r(nm);
                    members.get(a).prior.add(new TopicPartition(topicNames.get(t), p));
                    if (r(6) == 0) {
                        int b = r(nm);
                        if (b != a) members.get(b).prior.add(new TopicPartition(topicNames.get(t), p));
                    }
                }
            }
            Map<String, Subscription> subs = new HashMap<>();
            out.append("@scenario ").append(s).append(coop ? " cooperative\n" : " eager\n").append(tlines);
            for (Member mb : members) {
                ByteBuffer ud;
                List<TopicPartition> owned;
                int subGen;
                if (coop) {
                    owned = mb.prior;
                    subGen = mb.generation;
                    if (r(2) == 0) {
                        ud = ByteBuffer.allocate(4);
                        ud.putInt(mb.generation);
                        ud.flip();
                    } else {
                        ud = null;
                    }
                } else {
                    owned = Collections.emptyList();
                    ud = mb.prior.isEmpty() ? null : stickyUserData(mb.prior, mb.generation);
                    subGen = r(3) == 0 ? -1 : mb.generation;
                }
                mb.sub = new Subscription(mb.topics, ud, owned, subGen, Optional.ofNullable(mb.rack));
                mb.sub.setGroupInstanceId(Optional.ofNullable(mb.instance));
                subs.put(mb.id, mb.sub);
                out.append("M ").append(mb.id).append(' ').append(mb.instance == null ? "-" : mb.instance)
                   .append(' ').append(mb.rack == null ? "-" : mb.rack).append(' ').append(joined(mb.topics))
                   .append(' ').append(subGen).append(' ').append(tps(owned)).append(' ').append(hex(ud))
                   .append('\n');
                if (s < BLOB_SCENARIOS) {
                    for (short v = 0; v <= 3; v++) {
                        blobs.add("SUB " + v + " " + joined(mb.topics) + " " + tps(owned) + " " + subGen + " "
                            + (mb.rack == null ? "-" : mb.rack) + " " + hex(ud) + " "
                            + hex(ConsumerProtocol.serializeSubscription(mb.sub, v)));
                    }
                    if (!mb.prior.isEmpty()) {
                        blobs.add("STK " + mb.generation + " " + tps(mb.prior) + " "
                            + hex(stickyUserData(mb.prior, mb.generation)));
                    }
                }
            }
            for (String name : ASSIGNORS) {
                Map<String, Assignment> result;
                try {
                    result = assignor(name).assign(cluster, new GroupSubscription(subs)).groupAssignment();
                } catch (RuntimeException e) {
                    out.append("E ").append(name).append(' ').append(e.getClass().getSimpleName()).append('\n');
                    continue;
                }
                for (Member mb : members) {
                    Assignment a = result.get(mb.id);
                    List<TopicPartition> parts = a == null ? Collections.emptyList() : a.partitions();
                    out.append("A ").append(name).append(' ').append(mb.id).append(' ')
                       .append(tps(sorted(parts))).append('\n');
                    if (s < BLOB_SCENARIOS && !parts.isEmpty()) {
                        ByteBuffer aud = null;
                        if (r(2) == 0) {
                            aud = ByteBuffer.allocate(r(6));
                            for (int i = 0; i < aud.capacity(); i++) aud.put((byte) r(256));
                            aud.flip();
                        }
                        for (short v = 0; v <= 3; v++) {
                            blobs.add("ASN " + v + " " + tps(parts) + " " + hex(aud) + " "
                                + hex(ConsumerProtocol.serializeAssignment(new Assignment(parts, aud), v)));
                        }
                    }
                }
            }
        }

        int sid = SCENARIOS;
        for (int ch = 0; ch < CHAINS; ch++) {
            boolean coop = r(2) == 1;
            int nm = 2 + r(19);
            int ntopics = 1 + r(3);
            List<String> topicNames = new ArrayList<>();
            List<Integer> counts = new ArrayList<>();
            for (int t = 0; t < ntopics; t++) {
                topicNames.add("t" + t);
                counts.add(1 + r(60));
            }
            boolean racks = r(4) == 0;
            boolean allTopics = r(2) == 0;
            List<PartitionInfo> infos = new ArrayList<>();
            StringBuilder tlines = new StringBuilder();
            for (int t = 0; t < ntopics; t++) {
                List<String> prs = new ArrayList<>();
                for (int p = 0; p < counts.get(t); p++) {
                    Node[] reps;
                    if (racks) {
                        int nr = 1 + r(3);
                        List<Integer> pool = new ArrayList<>(Arrays.asList(0, 1, 2, 3));
                        reps = new Node[nr];
                        List<String> rn = new ArrayList<>();
                        for (int k = 0; k < nr; k++) {
                            reps[k] = nodes[pool.remove(r(pool.size()))];
                            if (reps[k].hasRack()) rn.add(reps[k].rack());
                        }
                        prs.add(rn.isEmpty() ? "." : String.join(",", rn));
                    } else {
                        reps = new Node[] {nodes[3]};
                    }
                    infos.add(new PartitionInfo(topicNames.get(t), p, reps[0], reps, reps));
                }
                tlines.append("T ").append(topicNames.get(t)).append(' ').append(counts.get(t)).append(' ')
                      .append(racks ? String.join("/", prs) : "-").append('\n');
            }
            Cluster cluster = new Cluster("c", Arrays.asList(nodes), infos, Collections.emptySet(), Collections.emptySet());
            List<Member> members = new ArrayList<>();
            int created = 0;
            for (int m = 0; m < nm; m++) members.add(chainMember(created++, racks, allTopics, topicNames));
            for (int round = 0; round < ROUNDS; round++) {
                if (round > 0) {
                    int op = r(3);
                    if (op == 0 && members.size() > 1) members.remove(r(members.size()));
                    else if (op == 1) members.add(chainMember(created++, racks, allTopics, topicNames));
                    else {
                        Member mb = members.get(r(members.size()));
                        mb.topics.clear();
                        for (String t : topicNames) if (r(2) == 0) mb.topics.add(t);
                        if (mb.topics.isEmpty()) mb.topics.add(topicNames.get(r(ntopics)));
                    }
                }
                Map<String, List<TopicPartition>> next = runRound(out, sid++, coop, tlines, cluster, members);
                for (Member mb : members) {
                    mb.prior = next.getOrDefault(mb.id, new ArrayList<>());
                    mb.generation = round + 1;
                }
            }
        }

        for (int k = 0; k < SKEWED; k++) {
            boolean coop = r(2) == 1;
            int nm = 3 + r(8);
            int ntopics = 2 + r(3);
            boolean racks = r(3) == 0;
            List<String> topicNames = new ArrayList<>();
            List<PartitionInfo> infos = new ArrayList<>();
            StringBuilder tlines = new StringBuilder();
            List<TopicPartition> all = new ArrayList<>();
            for (int t = 0; t < ntopics; t++) {
                String name = "t" + t;
                int count = 8 + r(40);
                topicNames.add(name);
                List<String> prs = new ArrayList<>();
                for (int p = 0; p < count; p++) {
                    Node[] reps;
                    if (racks) {
                        int nr = 1 + r(2);
                        List<Integer> pool = new ArrayList<>(Arrays.asList(0, 1, 2, 3));
                        reps = new Node[nr];
                        List<String> rn = new ArrayList<>();
                        for (int q = 0; q < nr; q++) {
                            reps[q] = nodes[pool.remove(r(pool.size()))];
                            if (reps[q].hasRack()) rn.add(reps[q].rack());
                        }
                        prs.add(rn.isEmpty() ? "." : String.join(",", rn));
                    } else {
                        reps = new Node[] {nodes[3]};
                    }
                    infos.add(new PartitionInfo(name, p, reps[0], reps, reps));
                    all.add(new TopicPartition(name, p));
                }
                tlines.append("T ").append(name).append(' ').append(count).append(' ')
                      .append(racks ? String.join("/", prs) : "-").append('\n');
            }
            Cluster cluster = new Cluster("c", Arrays.asList(nodes), infos, Collections.emptySet(), Collections.emptySet());
            List<Member> members = new ArrayList<>();
            for (int m = 0; m < nm; m++) {
                Member mb = chainMember(m, racks, false, topicNames);
                mb.id = "s" + mb.id.substring(1);
                mb.generation = m < 2 ? 2 : 1;
                members.add(mb);
            }
            for (TopicPartition tp : all) {
                members.get(r(2)).prior.add(tp);
                if (r(4) == 0) members.get(2 + r(nm - 2)).prior.add(tp);
            }
            runRound(out, sid++, coop, tlines, cluster, members);
        }
        out.append("@blobs\n");
        for (String b : blobs) out.append(b).append('\n');
        System.out.print(out);
    }
}
