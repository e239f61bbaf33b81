-- tests/cli/cli_test.lua: the kafka-native command-line tool (bin/kafka-native)
-- against the broker in $KAFKA_BOOTSTRAP, run as a user would, one
-- process per command: 100,000 records with keys and headers go in
-- through `produce` (lz4) and come back as JSON, 60,000 through a group
-- member that stops at -c and the rest through a second run with -e;
-- every record is checked exactly once. Then `group lag` shows the
-- expected lag at each step and `group reset` moves it (dry run first);
-- a reset while a member is in the group is refused, while `group list`
-- shows the group Stable and `group describe` shows the member and its
-- three partitions; `config alter` sets and deletes a topic config that
-- `config describe` then shows (and no longer shows); `metadata -J` and
-- a -f format over the last records of one partition.
--   <lua> tests/cli/cli_test.lua <lua> <dir of kafka_native.so>
-- (ctest lua_cli_<abi>; the interpreter given runs the tool too).
local interp = assert(arg[1], "usage: cli_test.lua <lua> <module dir>")
local moddir = assert(arg[2], "usage: cli_test.lua <lua> <module dir>")
package.cpath = moddir .. "/?.so;" .. package.cpath
local kafka = require("kafka_native")
local cjson = require("cjson")

local bootstrap = assert(os.getenv("KAFKA_BOOTSTRAP"), "KAFKA_BOOTSTRAP is not set: start a broker (tools/kafka/broker)")
local root = (debug.getinfo(1, "S").source:sub(2):match("^(.*)/tests/cli/[^/]*$")) or "."
local N = 100000
local tag = string.format("%x%d", os.time(), math.random(1, 1e6))
local topic = "kn-cli-" .. tag
local group = "kn-cli-group-" .. tag
local tmp = os.tmpname()

local function sh_quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

-- run(args, stdin_file) -> stdout, stderr text, exit ok
local function run(args, stdin_file)
  local parts = { "LUA_CPATH=" .. sh_quote(moddir .. "/?.so;;"), "KAFKA_BOOTSTRAP=" .. sh_quote(bootstrap),
                  sh_quote(interp), sh_quote(root .. "/bin/kafka-native") }
  for _, a in ipairs(args) do parts[#parts + 1] = sh_quote(a) end
  local cmd = table.concat(parts, " ") .. (stdin_file and (" < " .. sh_quote(stdin_file)) or " < /dev/null")
    .. " > " .. sh_quote(tmp .. ".out") .. " 2> " .. sh_quote(tmp .. ".err")
  local r1, _, r3 = os.execute(cmd)
  local ok = (r1 == true or r1 == 0) and (r3 == nil or r3 == 0)
  local function slurp(p)
    local f = assert(io.open(p, "rb"))
    local s = f:read("*a")
    f:close()
    return s
  end
  return slurp(tmp .. ".out"), slurp(tmp .. ".err"), ok
end

local function must(args, stdin_file)
  local out, err, ok = run(args, stdin_file)
  if not ok then error("kafka-native " .. table.concat(args, " ") .. " failed:\n" .. err, 2) end
  return out, err
end

local function check(cond, ...)
  if not cond then error(string.format(...), 2) end
end

-- Record i: key "k<i>", value with JSON's hard cases every 997 records.
local function value_of(i)
  if i % 997 == 0 then return 'v' .. i .. ' "quoted" back\\slash \1 caf\195\169 tab\there' end
  return "v" .. i
end

local failures = 0
local ok, err = pcall(function()
  -- create (3 partitions), produce from a file with a tab key delimiter
  must({ "topic", "create", "-t", topic, "-P", "3" })
  local input = tmp .. ".in"
  local f = assert(io.open(input, "wb"))
  for i = 1, N do f:write("k", i, "\t", value_of(i), "\n") end
  f:close()
  local _, perr = must({ "produce", "-t", topic, "-K", "\\t", "-H", "app=cli", "-H", "seq=one", "-H", "nullh",
                         "-z", "lz4", "-v", "-X", "linger.ms=5" }, input)
  check(perr:find("100000 records") and perr:find("0 failed"), "produce summary: %s", perr)

  local seen = {}
  local function take(out, expect)
    local n = 0
    for line in out:gmatch("[^\n]+") do
      local r = cjson.decode(line)
      local i = tonumber(r.key:match("^k(%d+)$"))
      check(i and i >= 1 and i <= N, "bad key %s", tostring(r.key))
      check(not seen[i], "record %d seen twice", i)
      seen[i] = true
      check(r.payload == value_of(i), "record %d: value %q", i, tostring(r.payload))
      check(r.topic == topic and r.partition >= 0 and r.partition < 3 and r.offset >= 0, "record %d: position", i)
      check(r.tstype == "create" and type(r.ts) == "number", "record %d: timestamp", i)
      local h = r.headers
      check(#h == 6 and h[1] == "app" and h[2] == "cli" and h[3] == "seq" and h[4] == "one" and h[5] == "nullh"
            and h[6] == cjson.null, "record %d: headers %s", i, cjson.encode(h))
      n = n + 1
    end
    check(n == expect, "expected %d JSON records, got %d", expect, n)
  end

  local function lag()
    local out = must({ "group", "lag", "-G", group, "-t", topic, "-J" })
    local j = cjson.decode(out)
    check(#j.partitions == 3, "lag: %s", out)
    return j.total_lag, j
  end

  -- 60,000 as a group member (stops at -c; commits only what it printed)
  take(must({ "consume", "-t", topic, "-G", group, "-o", "beginning", "-J", "-c", "60000" }), 60000)
  check(lag() == N - 60000, "lag after 60000: %s", tostring(lag()))
  -- the rest with -e; every record now seen once
  take(must({ "consume", "-t", topic, "-G", group, "-J", "-e" }), N - 60000)
  for i = 1, N do check(seen[i], "record %d never consumed", i) end
  check(lag() == 0, "lag at the end: %s", tostring(lag()))
  -- the text table names the group, topic and lag
  local text = must({ "group", "lag", "-G", group })
  check(text:find(group, 1, true) and text:find(topic, 1, true) and text:find("total lag 0", 1, true), "lag table:\n%s", text)

  -- reset: a dry run commits nothing; --execute does
  local dry, dryerr = must({ "group", "reset", "-G", group, "-t", topic, "--to-earliest" })
  check(dryerr:find("dry run") and dry:find("NEW%-OFFSET"), "dry run: %s %s", dry, dryerr)
  check(lag() == 0, "dry run changed the lag")
  must({ "group", "reset", "-G", group, "-t", topic, "--to-earliest", "--execute" })
  check(lag() == N, "lag after --to-earliest: %s", tostring(lag()))
  must({ "group", "reset", "-G", group, "-t", topic, "--shift-by", "10", "--execute" })
  check(lag() == N - 30, "lag after --shift-by 10: %s", tostring(lag()))
  must({ "group", "reset", "-G", group, "-t", topic .. ":0", "--to-latest", "--execute" })
  local total, j = lag()
  local p0 = j.partitions[1]
  local expect = 0
  for _, p in ipairs(j.partitions) do expect = expect + (p.partition == 0 and 0 or (p.log_end - 10)) end
  check(p0.lag == 0 and total == expect, "lag after partition 0 --to-latest: %d, expected %d", total, expect)
  -- a timestamp in the future: the end
  must({ "group", "reset", "-G", group, "-t", topic, "--to-datetime", "2999-01-01T00:00:00Z", "--execute" })
  check(lag() == 0, "lag after --to-datetime 2999: %s", tostring(lag()))
  must({ "group", "reset", "-G", group, "-t", topic, "--to-timestamp", "0", "--execute" })
  check(lag() == N, "lag after --to-timestamp 0: %s", tostring(lag()))

  -- a member in the group: the reset is refused, nothing changes
  local member = assert(kafka.consumer({ ["bootstrap.servers"] = bootstrap, ["group.id"] = group,
                                         ["enable.auto.commit"] = false }))
  assert(member:subscribe({ topic }))
  local deadline = os.time() + 60
  repeat assert(member:poll(200)) until #member:assignment() == 3 or os.time() > deadline
  check(#member:assignment() == 3, "the member got no assignment")
  local _, rerr, rok = run({ "group", "reset", "-G", group, "-t", topic, "--to-latest", "--execute" })
  check(not rok and rerr:find("active members", 1, true), "reset with a member: ok=%s %s", tostring(rok), rerr)
  -- group list / describe see the member (the member polls between them
  -- so it stays in the group)
  local listed
  for _ = 1, 50 do
    assert(member:poll(100))
    for _, g in ipairs(cjson.decode((must({ "group", "list", "-J" })))) do
      if g.group == group then listed = g end
    end
    if listed and listed.state == "Stable" then break end
  end
  check(listed and listed.state == "Stable" and listed.type == "classic", "group list: %s",
        listed and cjson.encode(listed) or "group missing")
  local text_list = must({ "group", "list", "--state", "Stable" })
  check(text_list:find(group, 1, true), "group list --state Stable:\n%s", text_list)
  assert(member:poll(100))
  local d = cjson.decode((must({ "group", "describe", "-G", group, "-J" })))
  check(d.state == "Stable" and #d.members == 1 and #d.members[1].assignment == 1
        and d.members[1].assignment[1].topic == topic and #d.members[1].assignment[1].partitions == 3
        and d.total_lag == N, "group describe -J: %s", cjson.encode(d))
  local dtext = must({ "group", "describe", "-G", group })
  check(dtext:find("1 member(s)", 1, true) and dtext:find(topic .. ":0,1,2", 1, true), "group describe:\n%s", dtext)
  member:close()
  check(lag() == N, "the refused reset changed the lag")

  -- metadata as JSON; a -f format over the last 5 records of partition 1
  local meta = cjson.decode((must({ "metadata", "-t", topic, "-J" })))
  check(#meta.topics == 1 and meta.topics[1].topic == topic and #meta.topics[1].partitions == 3, "metadata")
  local fmt = must({ "consume", "-t", topic, "-p", "1", "-o", "-5", "-e", "-f", "%p|%o|%k|%K|%S|%h\\n" })
  local lines = {}
  for line in fmt:gmatch("[^\n]+") do lines[#lines + 1] = line end
  check(#lines == 5, "-o -5 gave %d lines", #lines)
  local p, o, k, klen, vlen, hdr = lines[5]:match("^(%d+)|(%d+)|(k%d+)|(%d+)|(%d+)|(.*)$")
  check(p == "1" and tonumber(klen) == #k and tonumber(vlen) == #value_of(tonumber(k:sub(2)))
        and hdr == "app=cli,seq=one,nullh=", "format line %q", lines[5])
  local probe = assert(kafka.consumer({ ["bootstrap.servers"] = bootstrap }))
  local ends = assert(probe:end_offsets({ { topic = topic, partition = 1 } }, 30000))
  probe:close()
  check(tonumber(o) == ends[1].offset - 1, "last offset %s, log end %d", o, ends[1].offset)

  -- no group: -o beginning / end on the assignment (partition 1 only);
  -- -X auto.offset.reset says the opposite, and -o wins
  local from0 = must({ "consume", "-t", topic, "-p", "1", "-o", "beginning", "-e", "-f", "%o\n",
                       "-X", "auto.offset.reset=latest" })
  local first0, count0 = from0:match("^(%d+)\n"), select(2, from0:gsub("\n", ""))
  check(first0 == "0" and count0 == ends[1].offset, "-o beginning: first %s, %d lines, log end %d",
        tostring(first0), count0, ends[1].offset)
  local atend = must({ "consume", "-t", topic, "-p", "1", "-o", "end", "-e", "-f", "%o\n",
                       "-X", "auto.offset.reset=earliest" })
  check(atend == "", "-o end gave %q", atend:sub(1, 100))

  -- usage errors exit 2 with a message
  local _, uerr, uok = run({ "consume", "-t", topic, "-o", "nonsense", "-e" })
  check(not uok and uerr:find("-o:", 1, true), "bad -o: %s", uerr)
  local _, cerr, cok = run({ "config", "describe" })
  check(not cok and cerr:find("--entity-type", 1, true), "config without an entity: %s", cerr)

  -- config alter / describe on the topic (a broker applies an alter a
  -- moment after acknowledging it: bounded retries)
  must({ "config", "alter", "--entity-type", "topics", "--entity-name", topic,
         "--add-config", "retention.ms=123456,cleanup.policy=[compact,delete]" })
  local function topic_configs()
    local got = {}
    for _, c in ipairs(cjson.decode((must({ "config", "describe", "-t", topic, "-J" }))).configs) do
      got[c.name] = c
    end
    return got
  end
  local got
  for _ = 1, 50 do
    got = topic_configs()
    if got["retention.ms"] and got["cleanup.policy"] then break end
    os.execute("sleep 0.1")
  end
  check(got["retention.ms"] and got["retention.ms"].value == "123456" and got["retention.ms"].source == "DYNAMIC_TOPIC_CONFIG"
        and got["cleanup.policy"] and got["cleanup.policy"].value == "compact,delete", "config describe: %s",
        cjson.encode(got))
  local ctext = must({ "config", "describe", "-t", topic })
  check(ctext:find("retention.ms=123456", 1, true), "config describe text:\n%s", ctext)
  must({ "config", "alter", "-t", topic, "--delete-config", "retention.ms" })
  for _ = 1, 50 do
    got = topic_configs()
    if not got["retention.ms"] then break end
    os.execute("sleep 0.1")
  end
  check(not got["retention.ms"] and got["cleanup.policy"], "after --delete-config: %s", cjson.encode(got))
  local all = cjson.decode((must({ "config", "describe", "-t", topic, "--all", "-J" }))).configs
  check(#all > 20, "--all lists %d configs", #all)
  local _, aerr, aok = run({ "config", "alter", "-t", topic, "--add-config", "no.such.config=1" })
  check(not aok and aerr:find("INVALID_CONFIG", 1, true), "bad config: %s", aerr)
end)
if not ok then
  failures = 1
  io.stderr:write("FAIL: ", tostring(err), "\n")
end
run({ "topic", "delete", "-t", topic })
os.remove(tmp); os.remove(tmp .. ".out"); os.remove(tmp .. ".err"); os.remove(tmp .. ".in")
if failures == 0 then print(string.format("cli_test: %s: %d records round-tripped, lag and reset checked", _VERSION, N)) end
-- Close the state so finalizers run (cjson's buffers, the module's
-- pending guards): under the ASan build LeakSanitizer checks this process.
collectgarbage("collect")
os.exit(failures == 0 and 0 or 1, true)
