// AdminOracle: the Java Admin client's answers, printed canonically, for
// the admin oracle test (tests/c/it_admin_oracle.c), which prints ours
// the same way and compares them line by line.
//
//   AdminOracle BOOTSTRAP TOPIC BROKER_ID GROUP... 
//   AdminOracle share BOOTSTRAP GROUP...
//   AdminOracle streams BOOTSTRAP GROUP...
//   AdminOracle raft BOOTSTRAP VOTER_ID DIRECTORY_ID HOST PORT
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
// printed as its error name or NONE (it_admin_raft.c).
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

    static String outcome(org.apache.kafka.common.KafkaFuture<Void> f) throws InterruptedException {
        try {
            f.get();
            return "NONE";
        } catch (ExecutionException e) {
            return Errors.forException(e.getCause()).name();
        }
    }

    public static void main(String[] a) throws Exception {
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
