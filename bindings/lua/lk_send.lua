-- lk_send.lua: the LuaJIT FFI half of producer:send (lk_producer.c).
-- Embedded in kafka_native.so at build time (bindings/lua/CMakeLists.txt)
-- and run once per lua_State when the producer's metatable is made, on
-- LuaJIT builds only; never installed as a file.
--
-- Why: send is a lua_CFunction, and LuaJIT cannot compile a call to one:
-- in a request handler's loop of sends every record left the trace and
-- went through the interpreter and the Lua C API's argument checks. The
-- common call, send(topic, value) with two strings, now reaches C
-- through an FFI call the JIT compiles in line. Everything else
-- (options, nil or non-string values, a producer with a Lua hook that
-- send would run, a closed or forked producer, a wrong self) takes the
-- C send as before, so results, errors and the delivery-report contract
-- are the same on both paths: the record's report, when a callback
-- wants one, is queued by the same C code and served by poll, flush or
-- close.
--
-- Called with the producer's methods table, its metatable, the C fast
-- path (a lightuserdata function pointer), the C send and the C
-- function that returns a failed fast send's results. Without the ffi
-- module it changes nothing.
local methods, mt, send_ffi_p, c_send, c_send_error = ...

local ok, ffi = pcall(require, "ffi")
if not ok then return end

-- ud: the producer userdata (the FFI passes its payload's address).
-- 0: accepted; 1: needs the C send, nothing attempted; 2: failed.
local send_ffi = ffi.cast("int (*)(void *, const char *, const char *, size_t)", send_ffi_p)
local getmetatable, type = getmetatable, type

methods.send = function(self, topic, value, opts)
  if opts == nil and type(value) == "string" and type(topic) == "string" and getmetatable(self) == mt then
    local rc = send_ffi(self, topic, value, #value)
    if rc == 0 then return true end
    if rc == 2 then return c_send_error(self) end
  end
  return c_send(self, topic, value, opts)
end
