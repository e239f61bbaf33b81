-- examples/lua/transactional_copy.lua: consume-transform-produce, exactly
-- once. Reads `input` as a member of `group`, writes every value
-- upper-cased to `output`, and commits the input offsets inside the same
-- transaction as the output records (send_offsets_to_transaction with
-- consumer:group_metadata()): either both happen or neither does, so a
-- crash or a rebalance never copies a record twice or loses one for a
-- read_committed reader of `output`.
--
--   KAFKA_BOOTSTRAP=127.0.0.1:9092 lua5.4 examples/lua/transactional_copy.lua input output [group] [max_records] [seconds]
--
-- Stops after max_records copied (default 0: no limit) or `seconds`
-- (default 30), then closes. One transaction per poll that returned
-- records.
local kafka = require("kafka_native")

local bootstrap = os.getenv("KAFKA_BOOTSTRAP") or "127.0.0.1:9092"
local usage = "usage: transactional_copy.lua input output [group] [max_records] [seconds]"
local input = assert(arg[1], usage)
local output = assert(arg[2], usage)
local group = arg[3] or "kn-demo-copy"
local limit = tonumber(arg[4] or "0")
local seconds = tonumber(arg[5] or "30")

local consumer = assert(kafka.consumer({
  ["bootstrap.servers"] = bootstrap,
  ["group.id"] = group,
  ["enable.auto.commit"] = false,         -- offsets go with the transactions
  ["isolation.level"] = "read_committed", -- never copy another copier's aborted output
  ["auto.offset.reset"] = "earliest",
}))
-- One transactional.id per copier instance; a restarted copier with the
-- same id fences the old one (its next call fails with kind "fatal").
local producer = assert(kafka.producer({
  ["bootstrap.servers"] = bootstrap,
  ["transactional.id"] = group .. "-copier",
}))
assert(producer:init_transactions())

local function names(parts)
  local out = {}
  for _, p in ipairs(parts) do out[#out + 1] = p.topic .. "[" .. p.partition .. "]" end
  return table.concat(out, " ")
end

-- No transaction is open across polls, so a revoke has nothing to
-- finish: the next owner starts at the offsets of the last commit.
assert(consumer:subscribe({ input }, {
  on_assigned = function(_, parts) print("assigned " .. names(parts)) end,
  on_revoked = function(_, parts) print("revoked " .. names(parts)) end,
}))

-- The next offset to read of every partition in records: what the
-- transaction commits for the group.
local function next_offsets(records)
  local by_tp, out = {}, {}
  for _, r in ipairs(records) do
    local key = r.topic .. "\0" .. r.partition
    if not by_tp[key] then
      by_tp[key] = { topic = r.topic, partition = r.partition }
      out[#out + 1] = by_tp[key]
    end
    by_tp[key].offset = r.offset + 1
  end
  return out
end

-- Puts every partition of records back to its first record in them, so
-- an aborted batch is read (and copied) again.
local function rewind(records)
  local seen = {}
  for _, r in ipairs(records) do
    local key = r.topic .. "\0" .. r.partition
    if not seen[key] then
      seen[key] = true
      consumer:seek(r.topic, r.partition, r.offset)
    end
  end
end

local function copy(records)
  local ok, msg, code, kind = producer:begin_transaction()
  for _, r in ipairs(records) do
    if not ok then break end
    ok, msg, code, kind = producer:send(output, r.value and r.value:upper(), { key = r.key })
  end
  if ok then
    ok, msg, code, kind = producer:send_offsets_to_transaction(next_offsets(records), consumer:group_metadata())
  end
  if ok then ok, msg, code, kind = producer:commit_transaction() end
  if ok then return true end
  if kind == "fatal" then error("fenced or broken, giving up: " .. msg .. " (" .. code .. ")") end
  print("transaction failed (" .. code .. ", " .. tostring(kind) .. "): " .. msg .. "; aborting")
  assert(producer:abort_transaction())
  rewind(records)
  return false
end

local copied, transactions = 0, 0
local deadline = os.time() + seconds
while os.time() < deadline and (limit == 0 or copied < limit) do
  local records = assert(consumer:poll(500))
  if #records > 0 and copy(records) then
    copied, transactions = copied + #records, transactions + 1
  end
end
print(string.format("copied %d records in %d transactions", copied, transactions))
assert(producer:close())
assert(consumer:close())
