-- examples/lua/group_member.lua: one member of a consumer group, with a
-- rebalance listener and manual commits.
--
--   KAFKA_BOOTSTRAP=127.0.0.1:9092 lua5.4 examples/lua/group_member.lua topic [group] [seconds]
--
-- Start it two or three times with the same group and watch the
-- partitions move between the members. Offsets are committed by hand
-- (enable.auto.commit=false): after each processed batch, and in
-- on_revoked, while the partitions being handed back are still ours, so
-- the next owner starts right after the last record processed here.
-- Runs for `seconds` (default 30), then closes: close() runs on_revoked
-- once more and leaves the group.
local kafka = require("kafka_native")

local bootstrap = os.getenv("KAFKA_BOOTSTRAP") or "127.0.0.1:9092"
local topic = assert(arg[1], "usage: group_member.lua topic [group] [seconds]")
local group = arg[2] or "kn-demo-group"
local seconds = tonumber(arg[3] or "30")

local consumer = assert(kafka.consumer({
  ["bootstrap.servers"] = bootstrap,
  ["group.id"] = group,
  ["enable.auto.commit"] = false,
  ["auto.offset.reset"] = "earliest",
}))

local function names(parts)
  local out = {}
  for _, p in ipairs(parts) do out[#out + 1] = p.topic .. "[" .. p.partition .. "]" end
  return table.concat(out, " ")
end

assert(consumer:subscribe({ topic }, {
  on_assigned = function(c, parts)
    -- position() may call into the consumer from the listener
    for _, p in ipairs(parts) do
      print(string.format("assigned %s[%d], starting at offset %d", p.topic, p.partition,
        assert(c:position(p.topic, p.partition))))
    end
  end,
  on_revoked = function(c, parts)
    -- still ours: commit what was processed before it moves on
    local ok, msg = c:commit()
    print(string.format("revoked %s (commit: %s)", names(parts), ok and "ok" or msg))
  end,
  on_lost = function(_, parts)
    -- someone else may own them already: nothing to commit
    print("lost " .. names(parts))
  end,
}))

local processed = 0
local deadline = os.time() + seconds
while os.time() < deadline do
  local records, msg, code = consumer:poll(500)
  if not records then
    -- a listener error or a group error: report it and keep going
    io.stderr:write("poll: ", tostring(msg), " (", tostring(code), ")\n")
  elseif #records > 0 then
    for _, r in ipairs(records) do
      processed = processed + 1 -- the processing of the record goes here
    end
    assert(consumer:commit())
  end
end

local gm = consumer:group_metadata()
local m = consumer:metrics()
print(string.format("member %s generation %d: %d records, %d rebalances, %d partitions revoked",
  gm.member_id, gm.generation, processed, m.rebalances, m.partitions_revoked))
assert(consumer:close())
