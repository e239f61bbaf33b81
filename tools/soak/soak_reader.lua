-- tools/soak/soak_reader.lua: the Lua twin of soak_reader.c for
-- tools/soak. A consumer group member through the Lua module (classic
-- protocol with cooperative-sticky, or KIP-848 with protocol
-- "consumer"): subscribe, consume, commit synchronously after each poll
-- that returned records, and log in the C reader's format, one line per
-- event with a ms wall-clock timestamp (luasocket's gettime: the
-- checker merges every member's log by time):
--
--   <ts> <member> START <group> <protocol>
--   <ts> <member> ASSIGNED|REVOKED|LOST <changed> OWN <owned after>
--   <ts> <member> REC <partition> <offset> <writer> <seq> <generation>
--   <ts> <member> GEN <generation or epoch> <member id>
--   <ts> <member> COMMIT-ERROR <error>
--   <ts> <member> ERROR <where> <error>
--   <ts> <member> CLOSED <close result>
--
-- The ASSIGNED / REVOKED / LOST lines come from the rebalance listener,
-- written and flushed before the partitions are let go. The log is
-- flushed before every commit. Plain Lua has no signals: the member
-- stops when the file STOP exists (then closes: on_revoked, LeaveGroup);
-- SIGKILL ends it like any process. Exit 0 on a clean close.
--
--   lua5.4 soak_reader.lua BOOTSTRAP TOPIC GROUP PROTOCOL ID LOG STOP
local kafka = require("kafka_native")
local socket = require("socket")

local bootstrap, topic, group, protocol, id, log_path, stop_path =
  arg[1], arg[2], arg[3], arg[4], arg[5], arg[6], arg[7]
assert(bootstrap and topic and group and protocol and id and log_path and stop_path,
  "usage: soak_reader.lua BOOTSTRAP TOPIC GROUP PROTOCOL ID LOG STOP")

local out = assert(io.open(log_path, "a"))
out:setvbuf("full", 1 << 16)

local function now_ms() return math.floor(socket.gettime() * 1000) end

local function exists(path)
  local f = io.open(path, "r")
  if f then f:close() end
  return f ~= nil
end

local config = {
  ["bootstrap.servers"] = bootstrap,
  ["group.id"] = group,
  ["client.id"] = id,
  ["auto.offset.reset"] = "earliest",
  ["enable.auto.commit"] = "false",
  ["group.protocol"] = protocol,
}
if protocol == "classic" then
  config["partition.assignment.strategy"] = "org.apache.kafka.clients.consumer.CooperativeStickyAssignor"
  config["session.timeout.ms"] = 10000
  config["heartbeat.interval.ms"] = 2000
end
local consumer, msg = kafka.consumer(config)
if not consumer then
  out:write(string.format("%d %s ERROR new %s\n", now_ms(), id, tostring(msg)))
  out:close()
  os.exit(1)
end

-- The owned set, "p,p" lists as soak_member.c prints them.
local owned, steps, seen_steps, generation = {}, 0, 0, -1
local function list(parts)
  local ps = {}
  for _, tp in ipairs(parts) do ps[#ps + 1] = tp.partition end
  table.sort(ps)
  return #ps > 0 and table.concat(ps, ",") or "-"
end
local function step(kind, parts)
  if kind == "ASSIGNED" then
    for _, tp in ipairs(parts) do owned[tp.partition] = true end
  else
    for _, tp in ipairs(parts) do owned[tp.partition] = nil end
  end
  local now = {}
  for p in pairs(owned) do now[#now + 1] = { partition = p } end
  out:write(string.format("%d %s %s %s OWN %s\n", now_ms(), id, kind, list(parts), list(now)))
  out:flush()
  steps = steps + 1
end

local ok, smsg, scode = consumer:subscribe({ topic }, {
  on_assigned = function(_, parts) step("ASSIGNED", parts) end,
  on_revoked = function(_, parts) step("REVOKED", parts) end,
  on_lost = function(_, parts) step("LOST", parts) end,
})
if not ok then
  out:write(string.format("%d %s ERROR subscribe %s %s\n", now_ms(), id, tostring(scode), tostring(smsg)))
  out:close()
  os.exit(1)
end
out:write(string.format("%d %s START %s %s\n", now_ms(), id, group, protocol))
out:flush()

local status = 0
while not exists(stop_path) do
  local recs, pmsg, code = consumer:poll(200)
  if steps ~= seen_steps then
    seen_steps = steps
    local gm = consumer:group_metadata()
    if gm then
      generation = gm.generation
      out:write(string.format("%d %s GEN %d %s\n", now_ms(), id, generation,
        gm.member_id ~= "" and gm.member_id or "-"))
    end
  end
  if not recs then
    out:write(string.format("%d %s ERROR poll %s %s\n", now_ms(), id, tostring(code), tostring(pmsg)))
    out:flush()
    if code == "_FATAL" or code == "_CLOSED" then
      status = 1
      break
    end
  elseif #recs > 0 then
    for _, r in ipairs(recs) do
      local w, seq = (r.value or ""):match("^(%S+) (%d+)")
      out:write(string.format("%d %s REC %d %d %s %s %d\n", now_ms(), id, r.partition, r.offset,
        w or "?", seq or "-1", generation))
    end
    out:flush()
    local cok, _, ccode = consumer:commit({ sync = true, timeout_ms = 10000 })
    if not cok then out:write(string.format("%d %s COMMIT-ERROR %s\n", now_ms(), id, tostring(ccode))) end
  end
end
local cok, _, ccode = consumer:close(30000)
out:write(string.format("%d %s CLOSED %s\n", now_ms(), id, cok and "NONE" or tostring(ccode)))
out:close()
os.exit((status == 0 and cok) and 0 or 1)
