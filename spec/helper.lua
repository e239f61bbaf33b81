-- spec/helper.lua: what the busted specs share: where the built module
-- is (KN_LUA_CPATH, else build/lua/<this interpreter's ABI>/?.so), the
-- broker to talk to (KAFKA_BOOTSTRAP: a spec fails, never skips, without
-- it), how many brokers it has, unique topic names and record
-- timestamps the broker's retention keeps.
local helper = {}

local abi = (type(jit) == "table") and "jit" or _VERSION:match("%d+%.%d+")
helper.cpath = os.getenv("KN_LUA_CPATH") or ("build/lua/" .. abi .. "/?.so")
package.cpath = helper.cpath .. ";" .. package.cpath

function helper.bootstrap()
  local b = os.getenv("KAFKA_BOOTSTRAP")
  assert(b and b ~= "", "KAFKA_BOOTSTRAP is not set: start a broker with tools/kafka/broker start")
  return b
end

-- Brokers in the test cluster: the harness starts one unless told
-- otherwise (tools/test --nodes 3 with KN_TEST_BROKERS=3).
helper.brokers = tonumber(os.getenv("KN_TEST_BROKERS") or "1")

-- A topic name unique to this run and call.
local counter = 0
local run_id = string.format("%x%04x", os.time() % 0x100000, math.floor(os.clock() * 1e6) % 0x10000)
function helper.topic(tag)
  counter = counter + 1
  return string.format("kn-spec-%s-%s-%d", tag, run_id, counter)
end

-- A base for record timestamps a spec sets itself (base + i): the
-- current time in ms. Never a small constant such as 1000: a broker
-- deletes a segment whose newest record is older than retention.ms (7
-- days by default) at its next retention check (every 5 minutes, from
-- 30 s after it started), active segment included. Records stamped
-- in 1970 vanish at that check, the log start moves to the log end, and
-- a consumer reading from "earliest" finds nothing (batch_view_spec's
-- rare "no records within 30 s", issue #3 follow-up).
function helper.timestamp_base()
  return os.time() * 1000
end

-- A temporary file holding text; returns its path.
function helper.write_temp(text)
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
  return path
end

-- The ABI this interpreter speaks ("5.4", "5.1", "jit").
helper.abi = abi

return helper
