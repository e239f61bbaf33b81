-- examples/lua/group_lag.lua: a consumer-group lag report, what
-- `kafka-consumer-groups --describe` prints: for each group, each
-- partition it committed, the committed offset, the log end offset and
-- the lag between them.
--
--   KAFKA_BOOTSTRAP=127.0.0.1:9092 lua5.4 examples/lua/group_lag.lua [group ...]
--
-- Without group ids it reports every consumer group of the cluster
-- (protocol "consumer", or "" for groups that only commit offsets).
local kafka = require("kafka_native")

local bootstrap = os.getenv("KAFKA_BOOTSTRAP") or "127.0.0.1:9092"
local admin = assert(kafka.admin({ ["bootstrap.servers"] = bootstrap }))

local groups = { ... }
if #groups == 0 then
  local listed = assert(admin:list_groups())
  if listed.error then
    io.stderr:write("warning: a broker did not list its groups: " .. listed.message .. "\n")
  end
  for _, g in ipairs(listed) do
    if g.protocol_type == "consumer" or g.protocol_type == "" then groups[#groups + 1] = g.group_id end
  end
end

-- Every group's committed offsets in one call (batched per coordinator).
local committed = assert(admin:list_consumer_group_offsets(groups))

-- The log end of every partition any group committed, one call.
local wanted = {}
for _, group in ipairs(groups) do
  for topic, parts in pairs(committed[group].offsets or {}) do
    wanted[topic] = wanted[topic] or {}
    for p in pairs(parts) do wanted[topic][p] = "latest" end
  end
end
local ends = next(wanted) and assert(admin:list_offsets(wanted)) or {}

print(string.format("%-40s %-40s %9s %12s %12s %10s", "GROUP", "TOPIC", "PARTITION", "COMMITTED", "LOG-END",
  "LAG"))
for _, group in ipairs(groups) do
  local g = committed[group]
  if g.error then
    print(string.format("%-40s error: %s (%s)", group, g.message, g.error))
  else
    local topics, total = {}, 0
    for topic in pairs(g.offsets) do topics[#topics + 1] = topic end
    table.sort(topics)
    for _, topic in ipairs(topics) do
      local parts = {}
      for p in pairs(g.offsets[topic]) do parts[#parts + 1] = p end
      table.sort(parts)
      for _, p in ipairs(parts) do
        local c, e = g.offsets[topic][p], ends[topic] and ends[topic][p] or {}
        local lag = (c.offset and e.offset) and math.max(e.offset - c.offset, 0) or nil
        total = total + (lag or 0)
        print(string.format("%-40s %-40s %9d %12s %12s %10s", group, topic, p, tostring(c.offset or "-"),
          tostring(e.offset or e.error or "-"), tostring(lag or "-")))
      end
    end
    print(string.format("%-40s total lag %d", group, total))
  end
end
admin:close()
