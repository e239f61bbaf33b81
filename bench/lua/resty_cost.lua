-- bench/lua/resty_cost.lua: the OpenResty producer benchmark's
-- (bench/resty/, scenario resty-produce-batch) per-record work without
-- nginx, made to be counted in instructions per thread
-- (valgrind --tool=callgrind --separate-threads=yes): LuaJIT, "requests"
-- of PER sends of one SIZE-byte value each, the bench's producer
-- settings (acks=all, linger.ms=5, batch.size=16384, max.block.ms=0,
-- no delivery callback), and delivery reports served as
-- kafka_native.resty's reporter does: poll(0) when the producer's
-- readiness socket (ready_listen / ready_accept, connected here through
-- the FFI instead of a cosocket) holds its byte, checked between
-- requests. WARMUP records are sent and flushed first, so two runs
-- that differ only in NUM differ only by per-record work.
--
--   luajit bench/lua/resty_cost.lua BOOTSTRAP TOPIC NUM [SIZE PER WARMUP]
local kafka = require("kafka_native")
local ffi = require("ffi")

local bootstrap, topic, num = arg[1], arg[2], tonumber(arg[3])
local size, per, warmup = tonumber(arg[4] or 100), tonumber(arg[5] or 100), tonumber(arg[6] or 20000)
if not (bootstrap and topic and num) then
  io.stderr:write("usage: resty_cost.lua BOOTSTRAP TOPIC NUM [SIZE PER WARMUP]\n")
  os.exit(2)
end

ffi.cdef [[
typedef struct { unsigned short sun_family; char sun_path[108]; } kn_cost_sockaddr_un;
int socket(int domain, int type, int protocol);
int connect(int fd, const void *addr, unsigned int len);
long recv(int fd, void *buf, size_t len, int flags);
int close(int fd);
]]
local AF_UNIX, SOCK_STREAM, MSG_DONTWAIT = 1, 1, 0x40

local p = assert(kafka.producer({
  ["bootstrap.servers"] = bootstrap, ["acks"] = "all", ["linger.ms"] = 5,
  ["batch.size"] = 16384, ["max.block.ms"] = 0,
}))

-- The readiness socket, as kafka_native.resty's ready_socket does.
local path = assert(p:ready_listen(os.getenv("TMPDIR") or "/tmp"))
local fd = ffi.C.socket(AF_UNIX, SOCK_STREAM, 0)
assert(fd >= 0, "socket")
local sa = ffi.new("kn_cost_sockaddr_un")
sa.sun_family = AF_UNIX
ffi.copy(sa.sun_path, path)
assert(ffi.C.connect(fd, sa, ffi.sizeof(sa)) == 0, "connect " .. path)
assert(p:ready_accept())
local byte = ffi.new("char[64]")

local polls, full = 0, 0
local function serve_reports()
  if ffi.C.recv(fd, byte, 64, MSG_DONTWAIT) > 0 then
    polls = polls + 1
    assert(p:poll(0))
  end
end

local value = string.rep("x", size)
local function run(n)
  local left = n
  while left > 0 do
    local k = left < per and left or per
    for _ = 1, k do
      while true do
        local ok, err, code = p:send(topic, value)
        if ok then break end
        if code ~= "_QUEUE_FULL" then error(err) end
        full = full + 1
        p:poll(1) -- the handler's ngx.sleep(0.001)
      end
    end
    left = left - k
    serve_reports()
  end
end

run(warmup)
assert(p:flush(60000))
run(num)
assert(p:flush(60000))
local m = p:metrics()
assert(p:close())
ffi.C.close(fd)
print(("records %d failed %d batches %d requests %d polls %d full %d"):format(
  m.records_sent, m.records_failed, m.batches_sent, m.requests_sent, polls, full))
if m.records_failed > 0 or m.records_sent ~= num + warmup then os.exit(1) end
