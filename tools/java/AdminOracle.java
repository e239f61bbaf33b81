// AdminOracle: the Java Admin client's answers, printed canonically, for
// the admin oracle test (tests/c/it_admin_oracle.c), which prints ours
// the same way and compares them line by line.
//
//   AdminOracle BOOTSTRAP TOPIC BROKER_ID GROUP... 
//   AdminOracle share BOOTSTRAP GROUP...
//   AdminOracle streams BOOTSTRAP GROUP...
//   AdminOracle raft BOOTSTRAP VOTER_ID DIRECTORY_ID HOST PORT
//   AdminOracle reads BOOTSTRAP TOPIC GROUP USER TIMESTAMP
//   AdminOracle quorum BOOTSTRAP
//   AdminOracle txn BOOTSTRAP ID UNKNOWN_ID TOPIC
//   AdminOracle elect BOOTSTRAP TOPIC MISSING
//   AdminOracle tokens BOOTSTRAP USER PASSWORD CA_PEM OWNER
//   AdminOracle configres BOOTSTRAP TYPE...
//
// Prints describeConfigs (with synonyms and documentation) of the topic
// and of the broker, one line per config sorted by name, then
// describeAcls with three filters on the topic's ACLs (MATCH over every
// resource type; the topic's literal ACLs of principal User:TOPIC-p;
// every ACL of User:TOPIC-q), one line per binding, sorted, then
// describeConsumerGroups of each group (an error as its Errors name)
// with its members sorted by member id.
//
// "share": describeShareGroups and listShareGroupOffsets (every
// partition) of each group; "streams": describeStreamsGroups and
// listStreamsGroupOffsets of each group (it_admin_share.c,
// it_admin_streams.c compare them with ours); "raft": removeRaftVoter
// and addRaftVoter (listener CONTROLLER at HOST:PORT) of that voter, each
// printed as its error name or NONE (it_admin_raft.c); "reads": the
// read-only calls of it_admin_oracle_reads.c (see reads() below);
// "quorum": describeMetadataQuorum's leader, voters and observers;
// "txn": describeTransactions, listTransactions and describeProducers
// around an open transaction (it_admin_txn.c); "elect": electLeaders
// on TOPIC's partitions (it_admin_oracle_elect.c, see elect() below);
// "tokens": describeDelegationToken by OWNER and of every token, logged
// in over SASL_SSL with SCRAM-SHA-256 as USER (it_admin_oracle_tokens.c);
// "configres": listConfigResources of every type and of the given types
// (it_admin_oracle_configres.c).
import java.util.*;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.common.acl.*;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.resource.*;
import org.apache.kafka.common.protocol.Errors;

public class AdminOracle {
    static String clean(String s) {
        return s == null ? "null" : s.replace('\n', ' ').replace('\r', ' ');
    }

    static String tps(Set<org.apache.kafka.common.TopicPartition> set) {
        List<String> l = new ArrayList<>();
        for (org.apache.kafka.common.TopicPartition tp : set)
            l.add(tp.topic() + "-" + tp.partition());
        Collections.sort(l);
        return String.join(",", l);
    }

    static String opt(Optional<?> o) {
        return o.map(String::valueOf).orElse("-");
    }

    static String tasks(List<StreamsGroupMemberAssignment.TaskIds> l) {
        List<String> out = new ArrayList<>();
        for (StreamsGroupMemberAssignment.TaskIds t : l)
            for (Integer p : t.partitions())
                out.add(t.subtopologyId() + "-" + p);
        Collections.sort(out);
        return String.join(",", out);
    }

    static String kvs(Map<String, String> m) {
        List<String> l = new ArrayList<>();
        for (Map.Entry<String, String> e : m.entrySet())
            l.add(e.getKey() + "=" + e.getValue());
        Collections.sort(l);
        return String.join(",", l);
    }

    static String taskOffsets(List<StreamsGroupMemberDescription.TaskOffset> l) {
        List<String> out = new ArrayList<>();
        for (StreamsGroupMemberDescription.TaskOffset t : l)
            out.add(t.subtopologyId() + "-" + t.partition() + "=" + t.offset());
        Collections.sort(out);
        return String.join(",", out);
    }

    static void topicInfos(List<String> out, String g, String sub, String kind,
                           Map<String, StreamsGroupSubtopologyDescription.TopicInfo> m) {
        for (Map.Entry<String, StreamsGroupSubtopologyDescription.TopicInfo> e : m.entrySet())
            out.add("sttopic " + g + " " + sub + " " + kind + " " + e.getKey() + " partitions="
                + e.getValue().partitions() + " rf=" + e.getValue().replicationFactor()
                + " configs=" + kvs(e.getValue().topicConfigs()));
    }

    static void share(Admin admin, List<String> groups) throws Exception {
        for (String g : groups) {
            try {
                ShareGroupDescription d = admin.describeShareGroups(List.of(g)).all().get().get(g);
                System.out.println("share " + g + " state=" + d.groupState() + " coordinator=" + d.coordinator().id()
                    + " members=" + d.members().size() + " epoch=" + d.groupEpoch()
                    + " assignment_epoch=" + d.targetAssignmentEpoch());
                List<ShareMemberDescription> ms = new ArrayList<>(d.members());
                ms.sort(Comparator.comparing(ShareMemberDescription::consumerId));
                for (ShareMemberDescription m : ms)
                    System.out.println("smember " + g + " id=" + m.consumerId() + " client=" + m.clientId()
                        + " host=" + m.host() + " epoch=" + m.memberEpoch()
                        + " assignment=" + tps(m.assignment().topicPartitions()));
            } catch (ExecutionException e) {
                System.out.println("share " + g + " error=" + Errors.forException(e.getCause()).name());
            }
            try {
                Map<org.apache.kafka.common.TopicPartition, SharePartitionOffsetInfo> o = admin
                    .listShareGroupOffsets(Map.of(g, new ListShareGroupOffsetsSpec())).partitionsToOffsetInfo(g).get();
                List<String> lines = new ArrayList<>();
                for (Map.Entry<org.apache.kafka.common.TopicPartition, SharePartitionOffsetInfo> e : o.entrySet()) {
                    SharePartitionOffsetInfo i = e.getValue();
                    lines.add("soffset " + g + " " + e.getKey().topic() + "-" + e.getKey().partition() + " start="
                        + (i == null ? "null" : i.startOffset()) + " epoch=" + (i == null ? "-" : opt(i.leaderEpoch()))
                        + " lag=" + (i == null ? "-" : opt(i.lag())));
                }
                Collections.sort(lines);
                for (String l : lines)
                    System.out.println(l);
            } catch (ExecutionException e) {
                System.out.println("soffsets " + g + " error=" + Errors.forException(e.getCause()).name());
            }
        }
    }

    static void streams(Admin admin, List<String> groups) throws Exception {
        for (String g : groups) {
            try {
                StreamsGroupDescription d = admin.describeStreamsGroups(List.of(g)).all().get().get(g);
                List<String> subs = new ArrayList<>();
                for (StreamsGroupSubtopologyDescription s : d.subtopologies()) {
                    List<String> src = new ArrayList<>(s.sourceTopics());
                    Collections.sort(src);
                    subs.add(s.subtopologyId() + ":" + String.join("+", src));
                }
                Collections.sort(subs);
                System.out.println("streams " + g + " state=" + d.groupState() + " coordinator="
                    + d.coordinator().id() + " members=" + d.members().size() + " epoch=" + d.groupEpoch()
                    + " assignment_epoch=" + d.targetAssignmentEpoch() + " topology_epoch=" + d.topologyEpoch()
                    + " subtopologies=" + String.join(";", subs));
                List<String> infos = new ArrayList<>();
                for (StreamsGroupSubtopologyDescription s : d.subtopologies()) {
                    topicInfos(infos, g, s.subtopologyId(), "changelog", s.stateChangelogTopics());
                    topicInfos(infos, g, s.subtopologyId(), "repartition", s.repartitionSourceTopics());
                }
                Collections.sort(infos);
                for (String l : infos)
                    System.out.println(l);
                List<StreamsGroupMemberDescription> ms = new ArrayList<>(d.members());
                ms.sort(Comparator.comparing(StreamsGroupMemberDescription::memberId));
                for (StreamsGroupMemberDescription m : ms)
                    System.out.println("stmember " + g + " id=" + m.memberId() + " instance="
                        + m.instanceId().orElse("null") + " client=" + m.clientId() + " host=" + m.clientHost()
                        + " epoch=" + m.memberEpoch() + " process=" + m.processId()
                        + " active=" + tasks(m.assignment().activeTasks())
                        + " standby=" + tasks(m.assignment().standbyTasks())
                        + " warmup=" + tasks(m.assignment().warmupTasks())
                        + " target_active=" + tasks(m.targetAssignment().activeTasks())
                        + " rack=" + m.rackId().orElse("-") + " topology_epoch=" + m.topologyEpoch()
                        + " classic=" + m.isClassic()
                        + " endpoint=" + m.userEndpoint().map(e -> e.host() + ":" + e.port()).orElse("-")
                        + " tags=" + kvs(m.clientTags()) + " offsets=" + taskOffsets(m.taskOffsets())
                        + " end_offsets=" + taskOffsets(m.taskEndOffsets()));
            } catch (ExecutionException e) {
                System.out.println("streams " + g + " error=" + Errors.forException(e.getCause()).name());
            }
            try {
                Map<org.apache.kafka.common.TopicPartition, org.apache.kafka.clients.consumer.OffsetAndMetadata> o =
                    admin.listStreamsGroupOffsets(Map.of(g, new ListStreamsGroupOffsetsSpec()))
                        .partitionsToOffsetAndMetadata(g).get();
                List<String> lines = new ArrayList<>();
                for (Map.Entry<org.apache.kafka.common.TopicPartition, org.apache.kafka.clients.consumer.OffsetAndMetadata> e
                     : o.entrySet())
                    lines.add("stoffset " + g + " " + e.getKey().topic() + "-" + e.getKey().partition() + " offset="
                        + (e.getValue() == null ? "null" : e.getValue().offset()));
                Collections.sort(lines);
                for (String l : lines)
                    System.out.println(l);
            } catch (ExecutionException e) {
                System.out.println("stoffsets " + g + " error=" + Errors.forException(e.getCause()).name());
            }
        }
    }

    static String ids(Collection<QuorumInfo.ReplicaState> l) {
        List<Integer> out = new ArrayList<>();
        for (QuorumInfo.ReplicaState r : l)
            out.add(r.replicaId());
        Collections.sort(out);
        return out.toString().replace(" ", "").replace("[", "").replace("]", "");
    }

    static String intList(List<Integer> l) {
        return l.toString().replace(" ", "").replace("[", "").replace("]", "");
    }

    static String nodeIds(List<org.apache.kafka.common.Node> l) {
        List<Integer> out = new ArrayList<>();
        for (org.apache.kafka.common.Node n : l)
            out.add(n.id());
        return intList(out);
    }

    static String errorName(Throwable t) {
        return Errors.forException(t instanceof ExecutionException ? t.getCause() : t).name();
    }

    // The read-only answers of one scenario (it_admin_oracle_reads.c): the
    // cluster, features and quorum; the topic, its offsets, log dirs,
    // replica dirs, producers and reassignments; the simple group's
    // offsets, listing and classic description; the user's quotas and
    // SCRAM credentials (and a user without any).
    static void reads(Admin admin, String topic, String group, String user, long ts) throws Exception {
        DescribeClusterResult c = admin.describeCluster();
        List<org.apache.kafka.common.Node> nodes = new ArrayList<>(c.nodes().get());
        nodes.sort(Comparator.comparingInt(org.apache.kafka.common.Node::id));
        System.out.println("cluster id=" + c.clusterId().get() + " nodes=" + nodes.size());
        for (org.apache.kafka.common.Node n : nodes)
            System.out.println("node " + n.id() + " " + n.host() + ":" + n.port() + " rack=" + n.rack());
        FeatureMetadata f = admin.describeFeatures().featureMetadata().get();
        // The finalized epoch is the metadata log's offset: it moves.
        for (Map.Entry<String, FinalizedVersionRange> e : new TreeMap<>(f.finalizedFeatures()).entrySet())
            System.out.println("finalized " + e.getKey() + " " + e.getValue().minVersionLevel() + ".."
                + e.getValue().maxVersionLevel());
        for (Map.Entry<String, SupportedVersionRange> e : new TreeMap<>(f.supportedFeatures()).entrySet())
            System.out.println("supported " + e.getKey() + " " + e.getValue().minVersion() + ".."
                + e.getValue().maxVersion());
        QuorumInfo q = admin.describeMetadataQuorum().quorumInfo().get();
        System.out.println("quorum leader=" + q.leaderId() + " voters=" + ids(q.voters()) + " observers="
            + ids(q.observers()));

        for (TopicListing tl : admin.listTopics().listings().get())
            if (tl.name().equals(topic))
                System.out.println("listed_topic " + tl.name() + " id=" + tl.topicId() + " internal=" + tl.isInternal());
        TopicDescription td = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
        System.out.println("topic " + topic + " id=" + td.topicId() + " internal=" + td.isInternal()
            + " partitions=" + td.partitions().size());
        for (org.apache.kafka.common.TopicPartitionInfo pi : td.partitions()) {
            System.out.println("tpart " + topic + "-" + pi.partition() + " leader=" + pi.leader().id()
                + " replicas=" + nodeIds(pi.replicas()) + " isr=" + nodeIds(pi.isr()));
        }
        String[] names = {"earliest", "latest", "max_timestamp", "timestamp"};
        for (int k = 0; k < names.length; k++) {
            OffsetSpec spec = k == 0 ? OffsetSpec.earliest() : k == 1 ? OffsetSpec.latest()
                : k == 2 ? OffsetSpec.maxTimestamp() : OffsetSpec.forTimestamp(ts);
            List<String> lines = new ArrayList<>();
            for (org.apache.kafka.common.TopicPartitionInfo pi : td.partitions()) {
                org.apache.kafka.common.TopicPartition tp = new org.apache.kafka.common.TopicPartition(topic, pi.partition());
                ListOffsetsResult.ListOffsetsResultInfo i = admin.listOffsets(Map.of(tp, spec)).partitionResult(tp).get();
                lines.add("offset " + topic + "-" + pi.partition() + " " + names[k] + " offset=" + i.offset()
                    + " ts=" + i.timestamp() + " epoch=" + opt(i.leaderEpoch()));
            }
            Collections.sort(lines);
            for (String l : lines)
                System.out.println(l);
        }
        int leader = td.partitions().get(0).leader().id();
        Map<String, LogDirDescription> dirs = admin.describeLogDirs(List.of(leader)).descriptions().get(leader).get();
        List<String> lines = new ArrayList<>();
        for (Map.Entry<String, LogDirDescription> d : dirs.entrySet())
            for (Map.Entry<org.apache.kafka.common.TopicPartition, ReplicaInfo> r : d.getValue().replicaInfos().entrySet())
                if (r.getKey().topic().equals(topic))
                    lines.add("logdir " + leader + " " + d.getKey() + " " + topic + "-" + r.getKey().partition()
                        + " size=" + r.getValue().size() + " lag=" + r.getValue().offsetLag() + " future="
                        + r.getValue().isFuture());
        Collections.sort(lines);
        for (String l : lines)
            System.out.println(l);
        for (org.apache.kafka.common.TopicPartitionInfo pi : td.partitions()) {
            org.apache.kafka.common.TopicPartitionReplica r =
                new org.apache.kafka.common.TopicPartitionReplica(topic, pi.partition(), leader);
            DescribeReplicaLogDirsResult.ReplicaLogDirInfo i = admin.describeReplicaLogDirs(List.of(r)).all().get().get(r);
            System.out.println("replicadir " + topic + "-" + pi.partition() + "-" + leader + " dir="
                + i.getCurrentReplicaLogDir() + " lag=" + i.getCurrentReplicaOffsetLag() + " future="
                + i.getFutureReplicaLogDir() + " future_lag=" + i.getFutureReplicaOffsetLag());
        }
        org.apache.kafka.common.TopicPartition p0 = new org.apache.kafka.common.TopicPartition(topic, 0);
        for (ProducerState st : admin.describeProducers(List.of(p0)).partitionResult(p0).get().activeProducers())
            System.out.println("producer " + topic + "-0 id=" + st.producerId() + " epoch=" + st.producerEpoch()
                + " last_seq=" + st.lastSequence() + " last_ts=" + st.lastTimestamp() + " coordinator_epoch="
                + (st.coordinatorEpoch().isPresent() ? String.valueOf(st.coordinatorEpoch().getAsInt()) : "-")
                + " txn_start=" + (st.currentTransactionStartOffset().isPresent()
                    ? String.valueOf(st.currentTransactionStartOffset().getAsLong()) : "-"));
        System.out.println("reassignments " + admin.listPartitionReassignments(Set.of(p0)).reassignments().get().size());

        lines = new ArrayList<>();
        for (Map.Entry<org.apache.kafka.common.TopicPartition, org.apache.kafka.clients.consumer.OffsetAndMetadata> e
             : admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get().entrySet())
            lines.add("goffset " + group + " " + e.getKey().topic() + "-" + e.getKey().partition() + " offset="
                + e.getValue().offset() + " epoch=" + opt(e.getValue().leaderEpoch()) + " metadata="
                + e.getValue().metadata());
        Collections.sort(lines);
        for (String l : lines)
            System.out.println(l);
        for (GroupListing g : admin.listGroups(new ListGroupsOptions().withTypes(
                 Set.of(org.apache.kafka.common.GroupType.CLASSIC))).all().get())
            if (g.groupId().equals(group))
                System.out.println("listed " + g.groupId() + " type=" + g.type().map(Object::toString).orElse("-")
                    + " protocol=" + g.protocol() + " state=" + g.groupState().map(Object::toString).orElse("-"));
        ClassicGroupDescription cg = admin.describeClassicGroups(List.of(group)).all().get().get(group);
        System.out.println("classic " + group + " state=" + cg.state() + " simple=" + cg.isSimpleConsumerGroup()
            + " protocol=" + cg.protocol() + " members=" + cg.members().size() + " coordinator="
            + cg.coordinator().id());

        org.apache.kafka.common.quota.ClientQuotaFilter qf = org.apache.kafka.common.quota.ClientQuotaFilter.contains(
            List.of(org.apache.kafka.common.quota.ClientQuotaFilterComponent.ofEntity("user", user)));
        lines = new ArrayList<>();
        for (Map.Entry<org.apache.kafka.common.quota.ClientQuotaEntity, Map<String, Double>> e
             : admin.describeClientQuotas(qf).entities().get().entrySet()) {
            List<String> parts = new ArrayList<>();
            for (Map.Entry<String, String> pe : e.getKey().entries().entrySet())
                parts.add(pe.getKey() + "=" + pe.getValue());
            Collections.sort(parts);
            for (Map.Entry<String, Double> v : e.getValue().entrySet())
                lines.add("quota " + String.join(",", parts) + " " + v.getKey() + "=" + v.getValue());
        }
        Collections.sort(lines);
        for (String l : lines)
            System.out.println(l);
        DescribeUserScramCredentialsResult sr = admin.describeUserScramCredentials(List.of(user, user + "-none"));
        for (String u : List.of(user, user + "-none")) {
            try {
                lines = new ArrayList<>();
                for (ScramCredentialInfo i : sr.description(u).get().credentialInfos())
                    lines.add("scram " + u + " " + i.mechanism() + " iterations=" + i.iterations());
                Collections.sort(lines);
                for (String l : lines)
                    System.out.println(l);
            } catch (ExecutionException e) {
                System.out.println("scram " + u + " error=" + errorName(e));
            }
        }
    }

    // describeTransactions of ID and of NONE (unknown), listTransactions
    // filtered on ID as a pattern, describeProducers of TOPIC-0
    // (it_admin_txn.c, around a transaction left open).
    static void txn(Admin admin, String id, String none, String topic) throws Exception {
        DescribeTransactionsResult dr = admin.describeTransactions(List.of(id, none));
        for (String t : List.of(id, none)) {
            try {
                TransactionDescription d = dr.description(t).get();
                List<String> parts = new ArrayList<>();
                for (org.apache.kafka.common.TopicPartition tp : d.topicPartitions())
                    parts.add(tp.topic() + "-" + tp.partition());
                Collections.sort(parts);
                System.out.println("txn " + t + " state=" + d.state() + " coordinator=" + d.coordinatorId()
                    + " producer=" + d.producerId() + " epoch=" + d.producerEpoch() + " timeout="
                    + d.transactionTimeoutMs() + " start=" + (d.transactionStartTimeMs().isPresent()
                        ? String.valueOf(d.transactionStartTimeMs().getAsLong()) : "-")
                    + " partitions=" + String.join(",", parts));
            } catch (ExecutionException e) {
                System.out.println("txn " + t + " error=" + errorName(e));
            }
        }
        List<String> lines = new ArrayList<>();
        for (TransactionListing l : admin.listTransactions(new ListTransactionsOptions()
                 .filterOnTransactionalIdPattern(id)).all().get())
            lines.add("listed " + l.transactionalId() + " producer=" + l.producerId() + " state=" + l.state());
        Collections.sort(lines);
        for (String l : lines)
            System.out.println(l);
        org.apache.kafka.common.TopicPartition p0 = new org.apache.kafka.common.TopicPartition(topic, 0);
        lines = new ArrayList<>();
        for (ProducerState st : admin.describeProducers(List.of(p0)).partitionResult(p0).get().activeProducers())
            lines.add("producer " + topic + "-0 id=" + st.producerId() + " epoch=" + st.producerEpoch()
                + " last_seq=" + st.lastSequence() + " last_ts=" + st.lastTimestamp() + " coordinator_epoch="
                + (st.coordinatorEpoch().isPresent() ? String.valueOf(st.coordinatorEpoch().getAsInt()) : "-")
                + " txn_start=" + (st.currentTransactionStartOffset().isPresent()
                    ? String.valueOf(st.currentTransactionStartOffset().getAsLong()) : "-"));
        Collections.sort(lines);
        for (String l : lines)
            System.out.println(l);
    }

    // electLeaders as it_admin_oracle_elect.c runs it on its own topic:
    // preferred on partitions 0 (its preferred replica does not lead), 1
    // (it does), 9 (no such partition) and MISSING-0; unclean on 1 and 9;
    // preferred on 0 again. TOPIC is printed
    // as "topic" and MISSING as "missing": both sides run on topics of
    // their own, laid out alike.
    static void elect(Admin admin, String topic, String missing) throws Exception {
        org.apache.kafka.common.TopicPartition p0 = new org.apache.kafka.common.TopicPartition(topic, 0),
            p1 = new org.apache.kafka.common.TopicPartition(topic, 1),
            p9 = new org.apache.kafka.common.TopicPartition(topic, 9),
            m0 = new org.apache.kafka.common.TopicPartition(missing, 0);
        electLines(admin, "preferred", org.apache.kafka.common.ElectionType.PREFERRED, Set.of(p0, p1, p9, m0),
                   topic, missing);
        electLines(admin, "unclean", org.apache.kafka.common.ElectionType.UNCLEAN, Set.of(p1, p9), topic, missing);
        electLines(admin, "again", org.apache.kafka.common.ElectionType.PREFERRED, Set.of(p0), topic, missing);
    }

    static void electLines(Admin admin, String step, org.apache.kafka.common.ElectionType type,
                           Set<org.apache.kafka.common.TopicPartition> parts, String topic, String missing)
        throws Exception {
        List<String> lines = new ArrayList<>();
        for (Map.Entry<org.apache.kafka.common.TopicPartition, Optional<Throwable>> e
             : admin.electLeaders(type, parts).partitions().get().entrySet()) {
            String t = e.getKey().topic().equals(topic) ? "topic" : e.getKey().topic().equals(missing) ? "missing"
                : e.getKey().topic();
            lines.add("elect " + step + " " + t + "-" + e.getKey().partition() + " error="
                + e.getValue().map(x -> Errors.forException(x).name()).orElse("NONE"));
        }
        Collections.sort(lines);
        for (String l : lines)
            System.out.println(l);
    }

    static String tokenLine(String what, org.apache.kafka.common.security.token.delegation.DelegationToken t) {
        org.apache.kafka.common.security.token.delegation.TokenInformation i = t.tokenInfo();
        List<String> rs = new ArrayList<>();
        for (org.apache.kafka.common.security.auth.KafkaPrincipal r : i.renewers())
            rs.add(r.toString());
        return "token " + what + " id=" + i.tokenId() + " owner=" + i.owner() + " requester=" + i.tokenRequester()
            + " renewers=" + String.join(",", rs) + " issue=" + i.issueTimestamp() + " expiry="
            + i.expiryTimestamp() + " max=" + i.maxTimestamp() + " hmac=" + t.hmacAsBase64String();
    }

    // describeDelegationToken by owner, then of every token the login may
    // see, one line per token sorted (it_admin_oracle_tokens.c).
    static void tokens(Admin admin, String owner) throws Exception {
        for (int all = 0; all < 2; all++) {
            DescribeDelegationTokenOptions o = new DescribeDelegationTokenOptions();
            if (all == 0)
                o.owners(List.of(org.apache.kafka.common.utils.SecurityUtils.parseKafkaPrincipal(owner)));
            List<String> lines = new ArrayList<>();
            for (org.apache.kafka.common.security.token.delegation.DelegationToken t
                 : admin.describeDelegationToken(o).delegationTokens().get())
                lines.add(tokenLine(all == 0 ? "owner" : "all", t));
            Collections.sort(lines);
            for (String l : lines)
                System.out.println(l);
        }
    }

    // listConfigResources of every type, then of the given types, one line
    // per resource sorted (it_admin_oracle_configres.c).
    static void configres(Admin admin, List<String> types) throws Exception {
        Set<ConfigResource.Type> want = new HashSet<>();
        for (String t : types)
            want.add(ConfigResource.Type.valueOf(t));
        for (int k = 0; k < 2; k++) {
            List<String> lines = new ArrayList<>();
            for (ConfigResource r : admin.listConfigResources(k == 0 ? Set.of() : want,
                     new ListConfigResourcesOptions()).all().get())
                lines.add("configres " + (k == 0 ? "all" : "typed") + " " + r.type() + " " + r.name());
            Collections.sort(lines);
            for (String l : lines)
                System.out.println(l);
        }
    }

    static String outcome(org.apache.kafka.common.KafkaFuture<Void> f) throws InterruptedException {
        try {
            f.get();
            return "NONE";
        } catch (ExecutionException e) {
            return Errors.forException(e.getCause()).name();
        }
    }

    public static void main(String[] a) throws Exception {
        if (a.length == 4 && a[0].equals("elect")) {
            Properties p = new Properties();
            p.put("bootstrap.servers", a[1]);
            try (Admin admin = Admin.create(p)) {
                elect(admin, a[2], a[3]);
            }
            return;
        }
        if (a.length == 6 && a[0].equals("tokens")) {
            Properties p = new Properties();
            p.put("bootstrap.servers", a[1]);
            p.put("security.protocol", "SASL_SSL");
            p.put("sasl.mechanism", "SCRAM-SHA-256");
            p.put("sasl.jaas.config", "org.apache.kafka.common.security.scram.ScramLoginModule required username=\""
                + a[2] + "\" password=\"" + a[3] + "\";");
            p.put("ssl.truststore.type", "PEM");
            p.put("ssl.truststore.location", a[4]);
            try (Admin admin = Admin.create(p)) {
                tokens(admin, a[5]);
            }
            return;
        }
        if (a.length >= 2 && a[0].equals("configres")) {
            Properties p = new Properties();
            p.put("bootstrap.servers", a[1]);
            try (Admin admin = Admin.create(p)) {
                configres(admin, Arrays.asList(a).subList(2, a.length));
            }
            return;
        }
        if (a.length == 6 && a[0].equals("raft")) {
            Properties p = new Properties();
            p.put("bootstrap.servers", a[1]);
            try (Admin admin = Admin.create(p)) {
                int id = Integer.parseInt(a[2]);
                org.apache.kafka.common.Uuid dir = org.apache.kafka.common.Uuid.fromString(a[3]);
                System.out.println("remove_raft_voter error=" + outcome(admin.removeRaftVoter(id, dir).all()));
                System.out.println("add_raft_voter error=" + outcome(admin.addRaftVoter(id, dir,
                    Set.of(new RaftVoterEndpoint("CONTROLLER", a[4], Integer.parseInt(a[5])))).all()));
            }
            return;
        }
        if (a.length == 2 && a[0].equals("quorum")) {
            Properties p = new Properties();
            p.put("bootstrap.servers", a[1]);
            try (Admin admin = Admin.create(p)) {
                QuorumInfo q = admin.describeMetadataQuorum().quorumInfo().get();
                System.out.println("quorum leader=" + q.leaderId() + " voters=" + ids(q.voters()) + " observers="
                    + ids(q.observers()));
            }
            return;
        }
        if (a.length == 5 && a[0].equals("txn")) {
            Properties p = new Properties();
            p.put("bootstrap.servers", a[1]);
            try (Admin admin = Admin.create(p)) {
                txn(admin, a[2], a[3], a[4]);
            }
            return;
        }
        if (a.length == 6 && a[0].equals("reads")) {
            Properties p = new Properties();
            p.put("bootstrap.servers", a[1]);
            try (Admin admin = Admin.create(p)) {
                reads(admin, a[2], a[3], a[4], Long.parseLong(a[5]));
            }
            return;
        }
        if (a.length >= 2 && (a[0].equals("share") || a[0].equals("streams"))) {
            Properties p = new Properties();
            p.put("bootstrap.servers", a[1]);
            try (Admin admin = Admin.create(p)) {
                List<String> groups = Arrays.asList(a).subList(2, a.length);
                if (a[0].equals("share"))
                    share(admin, groups);
                else
                    streams(admin, groups);
            }
            return;
        }
        if (a.length < 3) {
            System.err.println("usage: AdminOracle BOOTSTRAP TOPIC BROKER_ID GROUP...");
            System.exit(2);
        }
        Properties p = new Properties();
        p.put("bootstrap.servers", a[0]);
        try (Admin admin = Admin.create(p)) {
            List<ConfigResource> res = List.of(new ConfigResource(ConfigResource.Type.TOPIC, a[1]),
                                               new ConfigResource(ConfigResource.Type.BROKER, a[2]));
            Map<ConfigResource, Config> got = admin.describeConfigs(res,
                new DescribeConfigsOptions().includeSynonyms(true).includeDocumentation(true)).all().get();
            for (ConfigResource r : res) {
                List<ConfigEntry> entries = new ArrayList<>(got.get(r).entries());
                entries.sort(Comparator.comparing(ConfigEntry::name));
                for (ConfigEntry e : entries) {
                    StringBuilder syn = new StringBuilder();
                    for (ConfigEntry.ConfigSynonym s : e.synonyms())
                        syn.append(s.name()).append('=').append(clean(s.value())).append('@').append(s.source()).append(';');
                    System.out.println("config " + r.type().name().toLowerCase(Locale.ROOT) + ":" + r.name() + " "
                        + e.name() + "=" + clean(e.value()) + " source=" + e.source() + " ro=" + e.isReadOnly()
                        + " sensitive=" + e.isSensitive() + " type=" + e.type() + " syn=" + syn
                        + " doc=" + clean(e.documentation()));
                }
            }
            String at = a[1];
            List<AclBindingFilter> filters = List.of(
                new AclBindingFilter(new ResourcePatternFilter(ResourceType.ANY, at, PatternType.MATCH),
                                     AccessControlEntryFilter.ANY),
                new AclBindingFilter(new ResourcePatternFilter(ResourceType.TOPIC, at, PatternType.LITERAL),
                                     new AccessControlEntryFilter("User:" + at + "-p", null, AclOperation.ANY,
                                                                  AclPermissionType.ANY)),
                new AclBindingFilter(ResourcePatternFilter.ANY,
                                     new AccessControlEntryFilter("User:" + at + "-q", null, AclOperation.ANY,
                                                                  AclPermissionType.ANY)));
            for (int f = 0; f < filters.size(); f++) {
                List<String> lines = new ArrayList<>();
                for (AclBinding b : admin.describeAcls(filters.get(f)).values().get())
                    lines.add("acl " + f + " " + b.pattern().resourceType() + ":" + b.pattern().name() + ":"
                        + b.pattern().patternType() + " " + b.entry().principal() + " " + b.entry().host() + " "
                        + b.entry().operation() + " " + b.entry().permissionType());
                Collections.sort(lines);
                for (String l : lines)
                    System.out.println(l);
            }
            List<String> groups = Arrays.asList(a).subList(3, a.length);
            for (String g : groups) {
                try {
                    ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(g)).all().get().get(g);
                    System.out.println("group " + g + " state=" + d.groupState() + " type="
                        + d.type().toString().toLowerCase(Locale.ROOT) + " simple=" + d.isSimpleConsumerGroup()
                        + " assignor=" + d.partitionAssignor() + " coordinator=" + d.coordinator().id()
                        + " members=" + d.members().size()
                        + " epoch=" + d.groupEpoch().map(String::valueOf).orElse("-")
                        + " assignment_epoch=" + d.targetAssignmentEpoch().map(String::valueOf).orElse("-"));
                    List<MemberDescription> ms = new ArrayList<>(d.members());
                    ms.sort(Comparator.comparing(MemberDescription::consumerId));
                    for (MemberDescription m : ms)
                        System.out.println("member " + g + " id=" + m.consumerId() + " instance="
                            + m.groupInstanceId().orElse("null") + " client=" + m.clientId() + " host=" + m.host()
                            + " epoch=" + m.memberEpoch().map(String::valueOf).orElse("-")
                            + " assignment=" + tps(m.assignment().topicPartitions())
                            + " target=" + m.targetAssignment().map(t -> tps(t.topicPartitions())).orElse("-"));
                } catch (ExecutionException e) {
                    System.out.println("group " + g + " error=" + Errors.forException(e.getCause()).name());
                }
            }
        }
    }
}
