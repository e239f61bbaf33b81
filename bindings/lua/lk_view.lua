-- lk_view.lua: the LuaJIT FFI side of batch:view() (lk_view.c). Embedded
-- in kafka_native.so at build time (bindings/lua/CMakeLists.txt) and run
-- once per lua_State, on the first batch:view(); never installed as a
-- file, so `require "kafka_native"` is all an application loads.
--
-- Called with the C glue: attach, release and header (lightuserdata
-- function pointers into lk_view.c) and the C struct sizes and offsets,
-- which are checked against the cdef below so a layout drift fails
-- loudly here instead of reading the wrong bytes. The record struct is
-- the core's own (knc_rec, core/consumer/records.h), read in place, so
-- a view copies nothing per record; the fields ending in _ are the
-- core's and not part of the view's API. Returns the view constructor:
-- new(block) -> a view cdata holding one reference on the block (the
-- poll's records), dropped by view:close() or the collector.
--
-- Why a GC-owned struct (ffi.new) and not a pointer to C memory: after
-- close the view's own fields (n, recs) must still be readable; close
-- only zeroes them (n = 0, recs = NULL), so a loop bounded by the view's
-- own length reads nothing instead of freed memory.
local attach_p, release_p, header_p, layout = ...

local ok, ffi = pcall(require, "ffi")
if not ok then
  error("batch:view() needs LuaJIT's ffi module (this is " .. _VERSION ..
    "): use batch:value_lens(t) / batch:values(t) instead", 0)
end

if not pcall(ffi.typeof, "struct kafka_native_view") then
  ffi.cdef [[
struct kafka_native_view_rec {
  int64_t offset;
  int64_t timestamp;
  const char *key;          /* NULL: null key */
  const char *value;        /* NULL: null value */
  const void *headers_;     /* private (v:headers(i) reads them) */
  int32_t key_len;          /* -1: null */
  int32_t value_len;        /* -1: null */
  int32_t headers_len_;     /* private */
  int32_t header_count;
  int32_t partition;
  int32_t leader_epoch;     /* -1: unknown */
  uint16_t topic_idx;       /* index into topics */
  uint8_t timestamp_type;   /* 0 CreateTime, 1 LogAppendTime */
  int16_t delivery_count_;  /* private */
};
struct kafka_native_view {
  const struct kafka_native_view_rec *recs; /* 0-based, n entries */
  const char *const *topics;
  void *block;
  int32_t n;
  int32_t topic_count;
};
]]
end

local rec_t = ffi.typeof("struct kafka_native_view_rec")
local view_t = ffi.typeof("struct kafka_native_view")
local function check(what, got, want)
  if got ~= want then
    error(string.format("kafka_native view layout mismatch: %s is %d in Lua, %d in C", what, got, want), 0)
  end
end
check("sizeof(rec)", ffi.sizeof(rec_t), layout.sizeof)
for _, f in ipairs({ "offset", "timestamp", "key", "value", "key_len", "value_len", "header_count",
  "partition", "leader_epoch", "topic_idx", "timestamp_type" }) do
  check("offsetof(rec, " .. f .. ")", ffi.offsetof(rec_t, f), layout[f])
end
check("sizeof(view)", ffi.sizeof(view_t), layout.view_size)
check("offsetof(view, n)", ffi.offsetof(view_t, "n"), layout.view_n)

local attach = ffi.cast("void (*)(struct kafka_native_view *, void *)", attach_p)
local release = ffi.cast("void (*)(struct kafka_native_view *)", release_p)
local header = ffi.cast("int (*)(const struct kafka_native_view *, int32_t, int32_t, const char **, int32_t *,"
  .. " const char **, int32_t *)", header_p)

-- Out-parameters for header(), reused (one thread per lua_State).
local hk, hv = ffi.new("const char *[1]"), ffi.new("const char *[1]")
local hkl, hvl = ffi.new("int32_t[1]"), ffi.new("int32_t[1]")

local methods = {}

-- The record struct at 1-based i, or an error naming the range.
local function rec(v, i)
  if type(i) ~= "number" or i < 1 or i > v.n or i % 1 ~= 0 then
    if v.block == nil then error("view is closed", 3) end
    error(string.format("record index %s out of range 1..%d", tostring(i), v.n), 3)
  end
  return v.recs[i - 1]
end

local function bytes(p, len)
  if len < 0 then return nil end
  return ffi.string(p, len)
end

function methods.value(v, i) local r = rec(v, i); return bytes(r.value, r.value_len) end
function methods.key(v, i) local r = rec(v, i); return bytes(r.key, r.key_len) end
function methods.value_len(v, i) return rec(v, i).value_len end
function methods.key_len(v, i) return rec(v, i).key_len end
function methods.offset(v, i) return tonumber(rec(v, i).offset) end
function methods.timestamp(v, i) return tonumber(rec(v, i).timestamp) end
function methods.partition(v, i) return rec(v, i).partition end
function methods.leader_epoch(v, i) return rec(v, i).leader_epoch end
function methods.timestamp_type(v, i)
  return rec(v, i).timestamp_type == 1 and "LogAppendTime" or "CreateTime"
end
function methods.topic(v, i) return ffi.string(v.topics[rec(v, i).topic_idx]) end

-- Array of {key, value} pairs (value nil for a null one), as batch:headers.
function methods.headers(v, i)
  local r = rec(v, i)
  local out = {}
  for h = 0, r.header_count - 1 do
    if header(v, i - 1, h, hk, hkl, hv, hvl) ~= 0 then break end
    out[h + 1] = { ffi.string(hk[0], hkl[0]), bytes(hv[0], hvl[0]) }
  end
  return out
end

-- Drops this view's reference now (idempotent); n becomes 0.
function methods.close(v)
  if v.block ~= nil then
    ffi.gc(v, nil)
    release(v)
  end
end

ffi.metatype(view_t, {
  __index = function(v, k)
    if type(k) == "number" then return rec(v, k) end
    return methods[k]
  end,
  __len = function(v) return v.n end,
  __tostring = function(v)
    if v.block == nil then return "kafka_native.view (closed)" end
    return string.format("kafka_native.view (%d records)", v.n)
  end,
})

return function(block)
  local v = ffi.gc(view_t(), release) -- may raise: nothing held yet
  attach(v, block)                    -- takes the reference; cannot fail
  return v
end
