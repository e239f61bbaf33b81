-- examples/lua/share_work_queue.lua: a work queue on a Kafka share group
-- (KIP-932). Start as many worker processes as you like, more than the
-- topic has partitions: the broker hands each record to one worker at a
-- time. A worker accepts what it processed, releases what it could not
-- process now (another worker, or itself, gets it again with its
-- delivery count one higher) and rejects what can never be processed.
--
--   KAFKA_BOOTSTRAP=127.0.0.1:9092 lua5.4 examples/lua/share_work_queue.lua TOPIC [GROUP [IDLE_S]]
--
-- Prints "done <value> <delivery count>" for each record it accepted,
-- "rejected <value>" for each it rejected, and stops after IDLE_S
-- seconds (default 10) without work. A new share group starts at the
-- log end; this example sets the group's share.auto.offset.reset to
-- earliest so the queue includes what was produced before it started.
local kafka = require("kafka_native")

local bootstrap = os.getenv("KAFKA_BOOTSTRAP") or "127.0.0.1:9092"
local topic = assert(arg[1], "usage: share_work_queue.lua TOPIC [GROUP [IDLE_S]]")
local group = arg[2] or (topic .. "-workers")
local idle_s = tonumber(arg[3] or "10")

local admin = assert(kafka.admin({ ["bootstrap.servers"] = bootstrap }))
assert(admin:incremental_alter_configs({
  group = { [group] = { { op = "set", name = "share.auto.offset.reset", value = "earliest" } } },
}))
-- The broker applies it a moment later (from its metadata log): wait,
-- or the group could start at the log end after all.
for _ = 1, 100 do
  local d = admin:describe_configs({ group = { group } })
  local e = d and d.group[group].configs and d.group[group].configs["share.auto.offset.reset"]
  if e and e.value == "earliest" then break end
  os.execute("sleep 0.1")
end
admin:close()

local failed = 0 -- acknowledgements the broker refused, from on_acknowledge
local worker = assert(kafka.share_consumer({
  ["bootstrap.servers"] = bootstrap,
  ["group.id"] = group,
  ["share.acknowledgement.mode"] = "explicit",
}, {
  -- The broker's answer to our acknowledgements (served from poll).
  on_acknowledge = function(_, _, offsets, err)
    if err then failed = failed + #offsets end
  end,
}))
assert(worker:subscribe({ topic }))

-- The work: a value "bad..." can never be processed; anything else can.
local function process(value)
  return value:sub(1, 3) ~= "bad"
end

local last_work = os.time()
while os.time() - last_work < idle_s do
  local records = assert(worker:poll(500))
  for _, r in ipairs(records) do
    if process(r.value) then assert(r:accept()) else assert(r:reject()) end
  end
  if #records > 0 then
    last_work = os.time()
    -- Wait for the broker's answer before reporting the work as done: a
    -- partition whose answer is an error (its lock expired, say) gives
    -- its records to another worker.
    local results, msg, _, partial = worker:commit_sync(30000)
    if not results then
      io.stderr:write("commit_sync: " .. msg .. "\n")
      results = partial or {}
    end
    local failed_part = {}
    for _, e in ipairs(results) do
      if e.error then failed_part[e.topic .. ":" .. e.partition] = true end
    end
    for _, r in ipairs(records) do
      if not failed_part[r.topic .. ":" .. r.partition] then
        if process(r.value) then
          print(string.format("done %s %d", r.value, r.delivery_count))
        else
          print("rejected " .. r.value)
        end
      end
    end
  end
  io.stdout:flush()
end
assert(worker:close())
if failed > 0 then
  io.stderr:write(string.format("%d acknowledgement(s) failed\n", failed))
  os.exit(1)
end
