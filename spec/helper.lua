-- spec/helper.lua: what the busted specs share: where the built module
-- is (KN_LUA_CPATH, else build/lua/<this interpreter's ABI>/?.so), the
-- broker to talk to (KAFKA_BOOTSTRAP: a spec fails, never skips, without
-- it), how many brokers it has, and unique topic names.
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
