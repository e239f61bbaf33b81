-- examples/lua/admin_topics.lua: create, list, describe and delete
-- topics with the admin client.
--
--   KAFKA_BOOTSTRAP=127.0.0.1:9092 lua5.4 examples/lua/admin_topics.lua
local kafka = require("kafka_native")

local bootstrap = os.getenv("KAFKA_BOOTSTRAP") or "127.0.0.1:9092"
local admin = assert(kafka.admin({ ["bootstrap.servers"] = bootstrap }))

local cluster = assert(admin:describe_cluster())
print(string.format("cluster %s, controller %d", cluster.cluster_id, cluster.controller_id))
for _, b in ipairs(cluster.brokers) do
  print(string.format("  broker %d at %s:%d", b.id, b.host, b.port))
end

local name = "kn-admin-example-" .. os.time()
local results = assert(admin:create_topics({
  { name = name, partitions = 4, configs = { ["retention.ms"] = 3600000 } },
}, { timeout_ms = 30000 }))
local r = results[name]
if r.error then
  error(string.format("create %s: %s (%s)", name, r.message, r.error))
end
print(string.format("created %s: id %s, %d partitions", name, r.topic_id, r.partitions))
assert(admin:wait_for_topics({ name }, 30000))

print("topics:")
for _, t in ipairs(assert(admin:list_topics())) do
  print("  " .. t.name)
end

local described = assert(admin:describe_topics({ name }))[name]
for _, p in ipairs(described.partitions) do
  print(string.format("  %s [%d] leader %d, replicas {%s}", name, p.partition, p.leader,
    table.concat(p.replicas, ",")))
end

local deleted = assert(admin:delete_topics({ name }))
print(string.format("deleted %s: %s", name, deleted[name].error or "ok"))
admin:close()
