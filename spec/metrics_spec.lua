-- spec/metrics_spec.lua: kafka_metrics() and kafka_metric() against a
-- real broker: Kafka's own metric names, groups and tags (Java's), as a
-- list a graphing pipeline turns into labelled series, beside the flat
-- metrics() table that stays as it was.
local helper = require("spec.helper")
local kafka = require("kafka_native")

local N = 200

-- The first metric of group/name whose tags include want's.
local function find(list, group, name, want)
  for _, m in ipairs(list) do
    if m.group == group and m.name == name then
      local ok = true
      for k, v in pairs(want or {}) do
        if m.tags[k] ~= tostring(v) then ok = false end
      end
      if ok then return m end
    end
  end
end

describe("kafka_metrics", function()
  local admin, topic

  setup(function()
    admin = assert(kafka.admin({ ["bootstrap.servers"] = helper.bootstrap(), ["client.id"] = "spec-metrics-admin" }))
    topic = helper.topic("metrics")
    helper.create_topic(admin, topic, 2)
  end)

  teardown(function()
    admin:delete_topics({ topic })
    admin:close()
  end)

  it("reports a producer's sends under Java's names, per topic and per broker", function()
    local producer = assert(kafka.producer({ ["bootstrap.servers"] = helper.bootstrap(),
      ["client.id"] = "spec-metrics-producer", ["metrics.sample.window.ms"] = 5000 }))
    for i = 1, N do assert(producer:send(topic, "value-" .. i, { partition = i % 2 })) end
    assert(producer:flush(30000))
    local list = assert(producer:kafka_metrics())
    -- sends count per attempt, as Java's: a record retried (a fresh
    -- topic's leader not elected yet) is also in record-retry-total
    local sent = find(list, "producer-metrics", "record-send-total")
    local retried = find(list, "producer-metrics", "record-retry-total").value
    assert.are.equal(N + retried, sent.value)
    assert.are.equal("sum", sent.kind)
    assert.are.equal("spec-metrics-producer", sent.tags["client-id"])
    assert.is_string(sent.description)
    assert.is_true(find(list, "producer-metrics", "record-send-rate").value > 0)
    local lat = find(list, "producer-metrics", "request-latency-avg").value
    assert.is_true(lat > 0 and lat < 30000)
    -- the largest record of each batch ("value-200": 9 bytes and framing)
    local rs_max = find(list, "producer-metrics", "record-size-max").value
    assert.is_true(rs_max > 9 and rs_max < 48)
    assert.is_true(find(list, "producer-metrics", "record-size-avg").value <= rs_max)
    -- Java's KafkaProducerMetrics: time spent in flush, in nanoseconds
    local flush = find(list, "producer-metrics", "flush-time-ns-total")
    assert.is_true(flush.value > 0)
    assert.are.equal("sum", flush.kind)
    assert.are.equal(0, find(list, "producer-metrics", "bufferpool-wait-time-ns-total").value)
    assert.are.equal(0, find(list, "producer-metrics", "txn-commit-time-ns-total").value)
    local per_topic = find(list, "producer-topic-metrics", "record-send-total", { topic = topic })
    local topic_retried = find(list, "producer-topic-metrics", "record-retry-total", { topic = topic }).value
    assert.are.equal(N + topic_retried, per_topic.value)
    local node = find(list, "producer-node-metrics", "request-total")
    assert.is_truthy(node.tags["node-id"]:match("^node%-"))
    -- one value, by group, name and tags
    assert.are.equal(N + topic_retried, producer:kafka_metric("producer-topic-metrics", "record-send-total", { topic = topic }))
    assert.is_nil(producer:kafka_metric("producer-metrics", "no-such-metric"))
    -- only one group
    for _, m in ipairs(assert(producer:kafka_metrics("producer-topic-metrics"))) do
      assert.are.equal("producer-topic-metrics", m.group)
    end
    -- the flat counters are still there
    assert.are.equal(N, producer:metrics().records_sent)
    assert.has_error(function() producer:kafka_metric("producer-metrics") end)
    producer:close()
    assert.has_error(function() producer:kafka_metrics() end, "producer is closed")
  end)

  it("reports a consumer's reads, lag per partition and group", function()
    local consumer = assert(kafka.consumer({ ["bootstrap.servers"] = helper.bootstrap(),
      ["client.id"] = "spec-metrics-consumer", ["group.id"] = helper.topic("metrics-group"),
      ["auto.offset.reset"] = "earliest", ["enable.auto.commit"] = false,
      ["metrics.sample.window.ms"] = 1000, ["fetch.max.wait.ms"] = 100 }))
    assert(consumer:subscribe({ topic }))
    local got, deadline = 0, os.time() + 60
    while got < N and os.time() <= deadline do got = got + #assert(consumer:poll(200)) end
    assert.are.equal(N, got)
    assert(consumer:commit({ sync = true }))
    -- caught up: the lag seen while reading leaves the 2 x 1 s window
    local lag_max
    deadline = os.time() + 30
    repeat
      assert.are.equal(0, #assert(consumer:poll(200)))
      lag_max = consumer:kafka_metric("consumer-fetch-manager-metrics", "records-lag-max")
    until lag_max == 0 or os.time() > deadline
    assert.are.equal(0, lag_max)
    local list = assert(consumer:kafka_metrics())
    assert.are.equal(N, find(list, "consumer-fetch-manager-metrics", "records-consumed-total").value)
    assert.are.equal(N, find(list, "consumer-fetch-manager-metrics", "records-consumed-total", { topic = topic }).value)
    for p = 0, 1 do
      local lag = find(list, "consumer-fetch-manager-metrics", "records-lag", { topic = topic, partition = p })
      assert.are.equal(0, lag.value)
    end
    assert.are.equal(2, find(list, "consumer-coordinator-metrics", "assigned-partitions").value)
    assert.is_true(find(list, "consumer-coordinator-metrics", "commit-total").value >= 1)
    assert.is_true(find(list, "consumer-coordinator-metrics", "rebalance-total").value >= 1)
    assert.are.equal(0, consumer:kafka_metric("consumer-fetch-manager-metrics", "records-lag",
      { topic = topic, partition = 1 }))
    consumer:close()
  end)

  it("reports the admin client's own network metrics", function()
    assert(admin:describe_cluster())
    local list = assert(admin:kafka_metrics())
    local req = find(list, "admin-client-metrics", "request-total")
    assert.is_true(req.value >= 1)
    assert.are.equal("spec-metrics-admin", req.tags["client-id"])
    assert.is_truthy(find(list, "admin-client-node-metrics", "request-latency-avg"))
  end)
end)
