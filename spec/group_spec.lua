-- spec/group_spec.lua: consumer groups from Lua against a real broker:
-- subscribe / subscribe_pattern / subscribe_regex (KIP-848's
-- broker-side regex, and one the broker rejects) with a rebalance listener, a two-member
-- group (two consumers in this Lua state, polled in turn) in which no
-- partition is ever owned twice, commits from on_revoked, a listener
-- error returned by poll, a custom assignor written in Lua, close /
-- <close> / __gc of a subscribed consumer, and the argument and state
-- errors. Every wait is a bounded
-- loop over poll.
local helper = require("spec.helper")
local kafka = require("kafka_native")

local PARTITIONS = 4
local RECORDS = 400

describe("kafka_native consumer groups", function()
  local admin, bootstrap
  local topics = {}

  -- A fresh topic with RECORDS records ("v1".."vN") spread over
  -- PARTITIONS partitions.
  local function filled_topic(tag)
    local topic = helper.topic(tag)
    local res = assert(admin:create_topics({ { name = topic, partitions = PARTITIONS } }, { timeout_ms = 30000 }))
    assert.is_nil(res[topic].error, res[topic].message)
    assert(admin:wait_for_topics({ topic }, 30000))
    local producer = assert(kafka.producer({ ["bootstrap.servers"] = bootstrap }))
    for i = 1, RECORDS do
      assert(producer:send(topic, "v" .. i, { partition = i % PARTITIONS }))
    end
    assert(producer:flush(30000))
    assert(producer:close())
    topics[#topics + 1] = topic
    return topic
  end

  local function new_consumer(group, extra)
    local conf = {
      ["bootstrap.servers"] = bootstrap,
      ["group.id"] = group,
      ["auto.offset.reset"] = "earliest",
      ["enable.auto.commit"] = false,
    }
    for k, v in pairs(extra or {}) do conf[k] = v end
    return assert(kafka.consumer(conf))
  end

  -- Polls the consumers in turn (200 ms each) until done() or 60 s.
  local function poll_until(consumers, done, on_records)
    local deadline = os.time() + 60
    while not done() do
      assert(os.time() <= deadline, "timed out")
      for i, c in ipairs(consumers) do
        local recs, msg, code = c:poll(200)
        assert(recs, tostring(msg) .. " " .. tostring(code))
        if on_records then on_records(i, recs) end
      end
    end
  end

  local function count(t)
    local n = 0
    for _ in pairs(t) do n = n + 1 end
    return n
  end

  setup(function()
    bootstrap = helper.bootstrap()
    admin = assert(kafka.admin({ ["bootstrap.servers"] = bootstrap }))
  end)

  teardown(function()
    admin:delete_topics(topics)
    admin:close()
  end)

  it("a single subscriber is assigned every partition and consumes everything", function()
    local topic = filled_topic("group-one")
    local group = helper.topic("g-one")
    local consumer = new_consumer(group)
    local events = {}
    local seen = {}
    assert(consumer:subscribe({ topic }, {
      on_assigned = function(c, parts)
        assert.are.equal(consumer, c)
        events[#events + 1] = { "assigned", #parts }
        for _, p in ipairs(parts) do
          assert.are.equal(topic, p.topic)
          -- calling back into the consumer from the listener
          assert.is_number(assert(c:position(p.topic, p.partition, 10000)))
        end
      end,
      on_revoked = function(_, parts) events[#events + 1] = { "revoked", #parts } end,
    }))
    assert.are.same({ topic }, consumer:subscription())
    local n = 0
    poll_until({ consumer }, function() return n >= RECORDS end, function(_, recs)
      for _, r in ipairs(recs) do
        assert.is_nil(seen[r.value], "record returned twice: " .. r.value)
        seen[r.value] = true
        n = n + 1
      end
    end)
    assert.are.equal(RECORDS, count(seen))
    assert.are.same({ "assigned", PARTITIONS }, events[1])
    assert.are.equal(PARTITIONS, #consumer:assignment())

    local gm = assert(consumer:group_metadata())
    assert.are.equal(group, gm.group_id)
    assert.is_true(gm.generation >= 1)
    assert.is_true(#gm.member_id > 0)
    assert.is_nil(gm.group_instance_id)
    local m = consumer:metrics()
    assert.is_true(m.rebalances >= 1)
    assert.are.equal(0, m.partitions_lost)
    assert.is_number(m.join_latency_ms_last)
    assert.is_number(m.rebalances_failed)

    -- close() runs on_revoked with everything, then leaves
    assert(consumer:close())
    assert.are.same({ "revoked", PARTITIONS }, events[#events])
    assert.has_error(function() consumer:poll(0) end, "consumer is closed")
  end)

  it("subscribe_pattern matches the topic by its whole name", function()
    local topic = filled_topic("group-pattern")
    local consumer = new_consumer(helper.topic("g-pattern"))
    local assigned = 0
    -- "kn-spec-group-pattern-<run>-<n>": only this topic has this prefix
    local regex = assert(topic:match("^(.*)%-%d+$")) .. "-[0-9]+"
    assert(consumer:subscribe_pattern(regex, {
      on_assigned = function(_, parts) assigned = assigned + #parts end,
    }))
    local n = 0
    poll_until({ consumer }, function() return n >= RECORDS end, function(_, recs) n = n + #recs end)
    assert.are.equal(RECORDS, n)
    assert.are.equal(PARTITIONS, assigned)
    assert.are.same({ topic }, consumer:subscription())
    assert(consumer:unsubscribe())
    assert.are.same({}, consumer:subscription())
    assert(consumer:close())
  end)

  it("subscribe_regex lets the broker match the regex (KIP-848)", function()
    local topic = filled_topic("group-re2j")
    local consumer = new_consumer(helper.topic("g-re2j"), { ["group.protocol"] = "consumer" })
    local assigned = 0
    local regex = assert(topic:match("^(.*)%-%d+$")) .. "-[0-9]+"
    assert(consumer:subscribe_regex(regex, {
      on_assigned = function(_, parts) assigned = assigned + #parts end,
    }))
    local n = 0
    poll_until({ consumer }, function() return n >= RECORDS end, function(_, recs) n = n + #recs end)
    assert.are.equal(RECORDS, n)
    assert.are.equal(PARTITIONS, assigned)
    assert.are.same({ topic }, consumer:subscription())
    assert(consumer:close())
  end)

  it("subscribe_regex: a regex the broker rejects fails poll", function()
    local consumer = new_consumer(helper.topic("g-re2j-bad"), { ["group.protocol"] = "consumer" })
    assert(consumer:subscribe_regex("kn-(unclosed"))
    local deadline = os.time() + 60
    local recs, msg, code
    repeat
      assert(os.time() <= deadline, "timed out")
      recs, msg, code = consumer:poll(200)
    until not recs
    assert.are.equal("INVALID_REGULAR_EXPRESSION", code)
    assert.matches("Invalid RE2J SubscriptionPattern", msg)
    assert(consumer:close())
  end)

  -- eager (the default range,cooperative-sticky), cooperative (KIP-429)
  -- and the KIP-848 consumer protocol
  -- (classic members heartbeat every 500 ms instead of 3 s, so a member
  -- hears of a rebalance sooner; KIP-848 takes its interval from the broker)
  local variants = {
    { name = "classic, eager", conf = { ["heartbeat.interval.ms"] = 500 } },
    { name = "classic, cooperative-sticky",
      conf = { ["partition.assignment.strategy"] = "org.apache.kafka.clients.consumer.CooperativeStickyAssignor",
               ["heartbeat.interval.ms"] = 500 } },
    { name = "KIP-848", conf = { ["group.protocol"] = "consumer" } },
  }
  for _, variant in ipairs(variants) do
  it("two members split the partitions and never own one twice (" .. variant.name .. ")", function()
    local topic = filled_topic("group-two")
    local group = helper.topic("g-two")
    local owner = {} -- partition -> member name
    local log = {}
    local consumed = {}
    local members = {}
    local function listener(name)
      return {
        on_assigned = function(c, parts)
          for _, p in ipairs(parts) do
            assert(owner[p.partition] == nil,
              string.format("partition %d given to %s while %s owns it", p.partition, name,
                tostring(owner[p.partition])))
            owner[p.partition] = name
            log[#log + 1] = name .. " +" .. p.partition
          end
        end,
        on_revoked = function(c, parts)
          -- still ours: commit what was consumed before it moves
          assert(c:commit())
          for _, p in ipairs(parts) do
            assert.are.equal(name, owner[p.partition])
            owner[p.partition] = nil
            log[#log + 1] = name .. " -" .. p.partition
          end
        end,
        on_lost = function(_, parts)
          for _, p in ipairs(parts) do owner[p.partition] = nil end
        end,
      }
    end
    local a = new_consumer(group, variant.conf)
    assert(a:subscribe({ topic }, listener("a")))
    members[1] = a
    local function on_records(i, recs)
      for _, r in ipairs(recs) do
        assert.are.equal(i == 1 and "a" or "b", owner[r.partition])
        consumed[r.value] = true
      end
    end
    poll_until({ a }, function() return count(owner) == PARTITIONS end, on_records)

    local b = new_consumer(group, variant.conf)
    assert(b:subscribe({ topic }, listener("b")))
    members[2] = b
    local function owned_by(name)
      local n = 0
      for _, o in pairs(owner) do if o == name then n = n + 1 end end
      return n
    end
    poll_until(members, function()
      return owned_by("a") == PARTITIONS / 2 and owned_by("b") == PARTITIONS / 2 and count(consumed) == RECORDS
    end, on_records)
    assert.are.equal(PARTITIONS / 2, #a:assignment())
    assert.are.equal(PARTITIONS / 2, #b:assignment())
    assert.are_not.equal(a:group_metadata().member_id, b:group_metadata().member_id)
    if not variant.conf["group.protocol"] then -- KIP-848 member epochs are per member
      assert.are.equal(a:group_metadata().generation, b:group_metadata().generation)
    end

    -- a leaves: its on_revoked runs from close, b takes everything over
    assert(a:close())
    assert.are.equal(0, owned_by("a"))
    poll_until({ b }, function() return owned_by("b") == PARTITIONS end, on_records)
    assert.are.equal(PARTITIONS, #b:assignment())
    assert.is_true(b:metrics().rebalances >= 2)
    assert(b:close())
    assert.are.equal(0, count(owner))
    assert.are.equal(RECORDS, count(consumed))
    -- every assignment was logged by the member that got it
    local adds = 0
    for _, line in ipairs(log) do if line:find("+", 1, true) then adds = adds + 1 end end
    assert.is_true(adds >= PARTITIONS + PARTITIONS / 2)
  end)
  end

  it("commits from on_revoked are visible afterwards", function()
    local topic = filled_topic("group-commit")
    local group = helper.topic("g-commit")
    local consumer = new_consumer(group)
    local commit_result
    assert(consumer:subscribe({ topic }, {
      on_revoked = function(c, parts)
        assert.are.equal(PARTITIONS, #parts)
        commit_result = { c:commit() }
      end,
    }))
    local n = 0
    poll_until({ consumer }, function() return n >= RECORDS end, function(_, recs) n = n + #recs end)
    assert(consumer:unsubscribe())
    assert.are.same({ true }, commit_result)
    assert.are.same({}, consumer:assignment())

    local query = {}
    for p = 0, PARTITIONS - 1 do query[#query + 1] = { topic = topic, partition = p } end
    local ends = assert(consumer:end_offsets(query, 10000))
    local committed = assert(consumer:committed(query, 10000))
    local total = 0
    for i, e in ipairs(committed) do
      assert.are.equal(ends[i].offset, e.offset)
      total = total + e.offset
    end
    assert.are.equal(RECORDS, total)
    assert(consumer:close())

    -- a new member of the group starts at the commits: nothing left
    local again = new_consumer(group)
    local assigned = false
    assert(again:subscribe({ topic }, { on_assigned = function() assigned = true end }))
    local late = 0
    poll_until({ again }, function() return assigned end, function(_, recs) late = late + #recs end)
    for _ = 1, 3 do late = late + #assert(again:poll(200)) end
    assert.are.equal(0, late)
    assert(again:close())
  end)

  it("returns an error raised in on_assigned from poll; the next poll works", function()
    local topic = filled_topic("group-error")
    local consumer = new_consumer(helper.topic("g-error"))
    local calls = 0
    assert(consumer:subscribe({ topic }, {
      on_assigned = function(c, parts)
        calls = calls + 1
        -- re-entering a call that runs the listener is refused
        local ok, msg, code = c:poll(0)
        assert.is_nil(ok)
        assert.are.equal("_STATE", code)
        assert.matches("inside a rebalance listener", msg)
        assert.are.same({ nil, "unsubscribe cannot run inside a rebalance listener", "_STATE" },
          { c:unsubscribe() })
        error("boom in on_assigned")
      end,
    }))
    local deadline = os.time() + 60
    local recs, msg, code
    repeat
      assert(os.time() <= deadline, "timed out")
      recs, msg, code = consumer:poll(200)
      if recs then assert.are.equal(0, #recs) end
    until recs == nil
    assert.are.equal("_CALLBACK", code)
    assert.matches("boom in on_assigned", msg)
    assert.matches("traceback", msg)
    assert.are.equal(1, calls)
    -- the assignment was applied; consumption goes on
    assert.are.equal(PARTITIONS, #consumer:assignment())
    local n = 0
    poll_until({ consumer }, function() return n >= RECORDS end, function(_, r) n = n + #r end)
    assert.are.equal(RECORDS, n)
    assert(consumer:close())
  end)

  it("on_lost runs when the member missed max.poll.interval.ms, then it rejoins", function()
    local topic = filled_topic("group-lost")
    local consumer = new_consumer(helper.topic("g-lost"), { ["max.poll.interval.ms"] = 1500 })
    local events = {}
    assert(consumer:subscribe({ topic }, {
      on_assigned = function(_, parts) events[#events + 1] = "assigned " .. #parts end,
      on_revoked = function(_, parts) events[#events + 1] = "revoked " .. #parts end,
      on_lost = function(c, parts)
        events[#events + 1] = "lost " .. #parts
        assert.are.equal(PARTITIONS, #c:assignment()) -- still listed during the call
      end,
    }))
    poll_until({ consumer }, function() return #events == 1 end)
    -- no poll for longer than max.poll.interval.ms: the member leaves
    os.execute("sleep 3")
    poll_until({ consumer }, function() return #events >= 3 end)
    assert.are.same({ "assigned " .. PARTITIONS, "lost " .. PARTITIONS, "assigned " .. PARTITIONS }, events)
    assert.are.equal(PARTITIONS, consumer:metrics().partitions_lost)
    assert(consumer:close())
  end)

  it("close() returns an error raised in on_revoked and still closes", function()
    local topic = filled_topic("group-close-error")
    local consumer = new_consumer(helper.topic("g-close-error"))
    local assigned = false
    assert(consumer:subscribe({ topic }, {
      on_assigned = function() assigned = true end,
      on_revoked = function() error("boom in on_revoked") end,
    }))
    poll_until({ consumer }, function() return assigned end)
    local ok, msg, code = consumer:close()
    assert.is_nil(ok)
    assert.are.equal("_CALLBACK", code)
    assert.matches("boom in on_revoked", msg)
    assert.are.equal("kafka_native.consumer (closed)", tostring(consumer))
  end)

  it("a garbage-collected subscribed consumer leaves without running Lua", function()
    local topic = filled_topic("group-gc")
    local revoked = 0
    do
      local consumer = new_consumer(helper.topic("g-gc"))
      local assigned = false
      assert(consumer:subscribe({ topic }, {
        on_assigned = function() assigned = true end,
        on_revoked = function() revoked = revoked + 1 end,
      }))
      poll_until({ consumer }, function() return assigned end)
    end
    collectgarbage()
    collectgarbage()
    assert.are.equal(0, revoked)
  end)

  if helper.abi == "5.4" then
    it("a <close> variable leaves the group through on_revoked", function()
      local topic = filled_topic("group-close-scope")
      local group = helper.topic("g-scope")
      local revoked = {}
      local chunk = assert(load([[
        local new_consumer, poll_until, topic, revoked = ...
        local consumer <close> = new_consumer(select(5, ...))
        local assigned = false
        assert(consumer:subscribe({ topic }, {
          on_assigned = function() assigned = true end,
          on_revoked = function(c, parts) revoked[#revoked + 1] = #parts; assert(c:commit()) end,
        }))
        poll_until({ consumer }, function() return assigned end)
      ]]))
      chunk(new_consumer, poll_until, topic, revoked, group)
      assert.are.same({ PARTITIONS }, revoked)
    end)
  end

  it("lets a Lua assignor decide the split, and returns its errors from poll", function()
    local topic = filled_topic("group-assignor")
    local consumer = new_consumer(helper.topic("g-assignor"))
    local seen_ctx, assigned
    assert(consumer:add_assignor("evens", function(ctx)
      seen_ctx = ctx
      local parts = {}
      for p = 0, ctx.partition_counts[topic] - 1, 2 do parts[#parts + 1] = { topic = topic, partition = p } end
      return { [ctx.members[1].member_id] = parts }
    end))
    local ok, msg, code = consumer:add_assignor("evens", function() end)
    assert.is_nil(ok)
    assert.are.equal("_INVALID_ARG", code)
    assert.matches("evens", msg)
    assert(consumer:subscribe({ topic }, { on_assigned = function(_, parts) assigned = parts end }))
    poll_until({ consumer }, function() return assigned ~= nil end)
    assert.are.equal(1, #seen_ctx.members)
    assert.are.same({ topic }, seen_ctx.members[1].topics)
    assert.are.equal(consumer:group_metadata().member_id, seen_ctx.members[1].member_id)
    assert.are.equal(PARTITIONS, seen_ctx.partition_counts[topic])
    local got = {}
    for _, p in ipairs(consumer:assignment()) do got[#got + 1] = p.partition end
    table.sort(got)
    assert.are.same({ 0, 2 }, got)
    -- too late once subscribed
    ok, _, code = consumer:add_assignor("late", function() end)
    assert.is_nil(ok)
    assert.are.equal("_STATE", code)
    assert(consumer:close())

    -- an assignor that raises: the poll that ran it says so
    local broken = new_consumer(helper.topic("g-assignor-err"))
    assert(broken:add_assignor("broken", function() error("no plan") end))
    assert(broken:subscribe({ topic }))
    local err_msg, err_code
    local deadline = os.time() + 30
    while not err_code and os.time() <= deadline do
      local recs, m, c = broken:poll(200)
      if not recs then err_msg, err_code = m, c end
    end
    assert.are.equal("_CALLBACK", err_code)
    assert.matches("no plan", err_msg)
    broken:close()

    local plain = new_consumer(nil)
    ok, _, code = plain:add_assignor("x", function() end)
    assert.is_nil(ok)
    assert.are.equal("_STATE", code)
    assert.has_error(function() plain:add_assignor("x", 1) end)
    assert.has_error(function() plain:add_assignor("", function() end) end)
    plain:close()
  end)

  it("examples/lua/group_member.lua consumes a topic in another process", function()
    local topic = filled_topic("group-example")
    local group = helper.topic("g-example")
    local interp = ({ ["5.4"] = "lua5.4", ["5.3"] = "lua5.3", ["5.1"] = "lua5.1", jit = "luajit" })[helper.abi]
    -- runs 4 s (bounded by the example itself), output read once it exited
    local cmd = string.format("LUA_CPATH='%s;;' %s examples/lua/group_member.lua %s %s 4 2>&1",
      helper.cpath, interp, topic, group)
    local pipe = assert(io.popen(cmd))
    local out = pipe:read("*a")
    pipe:close()
    local assigned = {}
    for p in out:gmatch("assigned [^\n]-%[(%d+)%], starting at offset 0") do assigned[#assigned + 1] = p end
    assert.are.equal(PARTITIONS, #assigned, out)
    assert.matches(": " .. RECORDS .. " records, 1 rebalances", out)
    assert.matches("revoked [^\n]+ %(commit: ok%)", out)
    -- its commits are what the group resumes from
    local consumer = new_consumer(group)
    local query = {}
    for p = 0, PARTITIONS - 1 do query[#query + 1] = { topic = topic, partition = p } end
    local total = 0
    for _, e in ipairs(assert(consumer:committed(query, 10000))) do total = total + (e.offset or 0) end
    assert.are.equal(RECORDS, total)
    assert(consumer:close())
  end)

  it("the readiness socket wakes an event loop for a rebalance step", function()
    local unix = require("socket.unix")
    local topic = filled_topic("group-ready")
    local consumer = new_consumer(helper.topic("g-ready"))
    local path = assert(consumer:ready_listen())
    local sock = assert(unix.stream())
    assert(sock:connect(path))
    assert(consumer:ready_accept())
    local assigned = false
    assert(consumer:subscribe({ topic }, { on_assigned = function() assigned = true end }))
    -- no poll is waiting: only the hook can say the assignment is ready
    sock:settimeout(30)
    assert.are.equal(1, #assert(sock:receive(1)))
    assert.is_false(assigned)
    local deadline = os.time() + 30
    while not assigned do
      assert(os.time() <= deadline, "timed out")
      assert(consumer:poll(100))
    end
    assert(consumer:close())
    sock:close()
  end)

  it("reports wrong arguments and state errors", function()
    local topic = filled_topic("group-errors")
    local consumer = new_consumer(helper.topic("g-errors"))
    assert.has_error(function() consumer:subscribe(topic) end)
    assert.has_error(function() consumer:subscribe({}) end)
    local raised, err = pcall(consumer.subscribe, consumer, { topic }, { on_assign = function() end })
    assert.is_false(raised)
    assert.matches("listener: unknown field 'on_assign'", err)
    assert.has_error(function() consumer:subscribe({ topic }, { on_revoked = 1 }) end)
    assert.has_error(function() consumer:subscribe_pattern("") end)
    local ok, msg, code = consumer:subscribe_pattern("a(")
    assert.is_nil(ok)
    assert.are.equal("_INVALID_ARG", code)
    assert.matches("not a valid POSIX extended regex", msg)
    -- a broker-side regex needs group.protocol=consumer (Java's error)
    ok, msg, code = consumer:subscribe_regex("kn-.*")
    assert.is_nil(ok)
    assert.are.equal("_UNSUPPORTED", code)
    assert.matches("not supported when using the CLASSIC protocol", msg)
    assert.has_error(function() consumer:subscribe_regex("") end)
    ok, msg, code = consumer:enforce_rebalance("why")
    assert.is_nil(ok)
    assert.are.equal("_STATE", code)
    assert.are.same({}, consumer:subscription())
    local gm = assert(consumer:group_metadata())
    assert.are.equal(-1, gm.generation)

    -- assign and subscribe are mutually exclusive
    assert(consumer:assign({ { topic = topic, partition = 0 } }))
    ok, msg, code = consumer:subscribe({ topic })
    assert.is_nil(ok)
    assert.are.equal("_STATE", code)
    assert(consumer:assign({}))
    assert(consumer:subscribe({ topic }))
    ok, msg, code = consumer:assign({ { topic = topic, partition = 0 } })
    assert.is_nil(ok)
    assert.are.equal("_STATE", code)
    assert(consumer:enforce_rebalance("spec"))
    assert(consumer:unsubscribe())
    assert(consumer:close())

    -- no group.id: subscribe is a state error, group_metadata too
    local plain = assert(kafka.consumer({ ["bootstrap.servers"] = bootstrap }))
    ok, msg, code = plain:subscribe({ topic })
    assert.is_nil(ok)
    assert.are.equal("_STATE", code)
    ok, msg, code = plain:group_metadata()
    assert.is_nil(ok)
    assert.are.equal("_STATE", code)
    assert(plain:close())
  end)
end)
