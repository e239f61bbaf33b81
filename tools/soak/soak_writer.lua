-- tools/soak/soak_writer.lua: the Lua twin of soak_writer.c for
-- tools/soak. An idempotent producer through the Lua module: records at
-- a steady rate to partition seq % partitions, each value
-- "<writer> <seq> <padding>", every delivery report appended to the
-- ledger in the C writer's format:
--
--   A <writer> <seq> <partition> <offset> <ack ms>
--   F <writer> <seq> <partition> <error>
--
-- Plain Lua has no signals: it stops when the file STOP exists, then
-- flushes and closes within 60 s; exit 0 on a clean close.
--
--   lua5.4 soak_writer.lua BOOTSTRAP TOPIC PARTITIONS ID LEDGER STOP [RATE]
local kafka = require("kafka_native")

local bootstrap, topic, partitions, id, ledger_path, stop_path, rate =
  arg[1], arg[2], tonumber(arg[3]), arg[4], arg[5], arg[6], tonumber(arg[7] or "150")
assert(bootstrap and topic and partitions and id and ledger_path and stop_path,
  "usage: soak_writer.lua BOOTSTRAP TOPIC PARTITIONS ID LEDGER STOP [RATE]")

local ledger = assert(io.open(ledger_path, "a"))
local acked, failed = 0, 0

local function exists(path)
  local f = io.open(path, "r")
  if f then f:close() end
  return f ~= nil
end

local producer = assert(kafka.producer({
  ["bootstrap.servers"] = bootstrap,
  ["client.id"] = "soak-" .. id,
  ["enable.idempotence"] = "true",
  ["acks"] = "all",
  ["linger.ms"] = 5,
}))

-- One callback per record: the closure keeps the record's sequence.
local function reporter(seq)
  return function(r)
    if r.error then
      failed = failed + 1
      ledger:write(string.format("F %s %d %d %s\n", id, seq, r.partition or -1, r.error))
      io.stderr:write(string.format("%s delivery of %d failed: %s\n", id, seq, r.message or r.error))
    else
      acked = acked + 1
      -- The ack time in ms: os.time() has only seconds, and the checker
      -- does not use this field for ordering.
      ledger:write(string.format("A %s %d %d %d %d\n", id, seq, r.partition, r.offset, os.time() * 1000))
    end
  end
end

local pad = string.rep("x", 100)
local start, seq = os.time(), 0
while not exists(stop_path) do
  -- Send what the rate allows by now (whole seconds), never more than
  -- ~10 s of records outstanding.
  local due = (os.time() - start + 1) * rate
  while seq < due and producer:metrics().outstanding < rate * 10 do
    local value = (id .. " " .. seq .. " " .. pad):sub(1, 100)
    local ok, msg, code = producer:send(topic, value, { key = id, partition = seq % partitions,
      on_delivery = reporter(seq) })
    if not ok then
      if code == "_QUEUE_FULL" or code == "_TIMED_OUT" then break end
      io.stderr:write(string.format("%s send %d: %s %s\n", id, seq, tostring(code), tostring(msg)))
      os.exit(1)
    end
    seq = seq + 1
  end
  producer:poll(20)
  ledger:flush()
end
local ok_flush, msg = producer:flush(60000)
producer:close(60000)
ledger:close()
io.stderr:write(string.format("%s sent=%d acked=%d failed=%d flush=%s\n", id, seq, acked, failed,
  ok_flush and "ok" or tostring(msg)))
os.exit(ok_flush and 0 or 1)
