-- spec/admin_configs_spec.lua: admin:describe_configs,
-- admin:incremental_alter_configs and admin:alter_configs against a real
-- broker: results keyed by resource type and name, entries with source,
-- type, documentation and synonyms, per-resource errors that leave the
-- other resources alone, and argument checks.
local helper = require("spec.helper")
local kafka = require("kafka_native")

-- An alteration is committed before the broker answers but applied by
-- each broker from the metadata log a moment later (Java sees the same):
-- wait, bounded, for a config to show a value from a source.
local function wait_config(admin, kind, name, key, source, value)
  local deadline = os.time() + 30
  local seen
  repeat
    local got = assert(admin:describe_configs({ [kind] = { name } }))
    local entry = assert(got[kind][tostring(name)].configs, got[kind][tostring(name)].message)[key]
    if entry.source == source and (value == nil or entry.value == value) then
      return entry
    end
    seen = tostring(entry.value) .. " from " .. entry.source
  until os.time() > deadline
  error(string.format("%s %s: %s, want %s from %s", name, key, seen, tostring(value), source))
end

describe("kafka_native.admin configs", function()
  local admin, broker

  setup(function()
    admin = assert(kafka.admin({ ["bootstrap.servers"] = helper.bootstrap() }))
    broker = tostring(assert(admin:describe_cluster()).brokers[1].id)
  end)

  teardown(function()
    admin:close()
  end)

  local function new_topic()
    local name = helper.topic("configs")
    local res = assert(admin:create_topics({ { name = name, partitions = 1 } }))
    assert.is_nil(res[name].error, res[name].message)
    assert(admin:wait_for_topics({ name }, 30000))
    return name
  end

  it("describes topics and brokers with synonyms and documentation", function()
    local topic, missing = new_topic(), helper.topic("missing")
    local got = assert(admin:describe_configs({ topic = { topic, missing }, broker = { tonumber(broker), "abc" } },
      { synonyms = true, documentation = true }))

    local retention = got.topic[topic].configs["retention.ms"]
    assert.are.equal("604800000", retention.value)
    assert.are.equal("DEFAULT_CONFIG", retention.source)
    assert.are.equal("LONG", retention.type)
    assert.is_false(retention.read_only)
    assert.is_false(retention.sensitive)
    assert.matches("retain", retention.documentation)
    local cleanup = got.topic[topic].configs["cleanup.policy"]
    assert.are.equal("LIST", cleanup.type)
    assert.are.same({ { name = "log.cleanup.policy", value = "delete", source = "DEFAULT_CONFIG" } },
      cleanup.synonyms)

    -- the missing topic and the broker name that is no id fail alone
    assert.are.equal("UNKNOWN_TOPIC_OR_PARTITION", got.topic[missing].error)
    assert.is_nil(got.topic[missing].configs)
    assert.are.equal("INVALID_REQUEST", got.broker.abc.error)
    assert.matches("'abc'", got.broker.abc.message)

    -- the broker by id answers from that broker: its static settings
    local rf = got.broker[broker].configs["offsets.topic.replication.factor"]
    assert.are.equal("STATIC_BROKER_CONFIG", rf.source)
    assert.is_true(rf.read_only)
    assert.are.equal("STATIC_BROKER_CONFIG", rf.synonyms[1].source)

    -- without the options: no synonyms, no documentation
    local plain = assert(admin:describe_configs({ topic = { topic } }))
    assert.is_nil(plain.topic[topic].configs["cleanup.policy"].synonyms)
    assert.is_nil(plain.topic[topic].configs["cleanup.policy"].documentation)
  end)

  it("sets, appends, subtracts and deletes, each resource for itself", function()
    local topic, other = new_topic(), new_topic()
    local res = assert(admin:incremental_alter_configs({
      topic = {
        [topic] = {
          { op = "set", name = "retention.ms", value = 123456 },
          { op = "set", name = "cleanup.policy", value = "delete" },
        },
        [other] = { { op = "set", name = "no.such.config", value = "1" } },
      },
      broker = { [broker] = { { op = "set", name = "log.cleaner.backoff.ms", value = 16000 } } },
    }))
    assert.are.same({}, res.topic[topic])
    assert.are.same({}, res.broker[broker])
    assert.are.equal("INVALID_CONFIG", res.topic[other].error)
    assert.are.equal(kafka.error_code("INVALID_CONFIG"), res.topic[other].code)
    assert.matches("no.such.config", res.topic[other].message)
    wait_config(admin, "topic", topic, "retention.ms", "DYNAMIC_TOPIC_CONFIG", "123456")
    wait_config(admin, "broker", broker, "log.cleaner.backoff.ms", "DYNAMIC_BROKER_CONFIG", "16000")

    res = assert(admin:incremental_alter_configs({
      topic = { [topic] = { { op = "append", name = "cleanup.policy", value = "compact" } } } }))
    assert.is_nil(res.topic[topic].error)
    wait_config(admin, "topic", topic, "cleanup.policy", "DYNAMIC_TOPIC_CONFIG", "delete,compact")
    res = assert(admin:incremental_alter_configs({
      topic = { [topic] = { { op = "subtract", name = "cleanup.policy", value = { "delete" } } } } }))
    assert.is_nil(res.topic[topic].error)
    wait_config(admin, "topic", topic, "cleanup.policy", "DYNAMIC_TOPIC_CONFIG", "compact")

    -- validate_only: a bad value fails, a good one changes nothing
    res = assert(admin:incremental_alter_configs({
      topic = {
        [topic] = { { op = "set", name = "retention.ms", value = 999 } },
        [other] = { { op = "set", name = "retention.ms", value = "soon" } },
      } }, { validate_only = true }))
    assert.is_nil(res.topic[topic].error)
    assert.are.equal("INVALID_CONFIG", res.topic[other].error)
    wait_config(admin, "topic", topic, "retention.ms", "DYNAMIC_TOPIC_CONFIG", "123456")

    res = assert(admin:incremental_alter_configs({
      topic = { [topic] = { { op = "delete", name = "retention.ms" } } },
      broker = { [broker] = { { op = "delete", name = "log.cleaner.backoff.ms" } } },
    }))
    assert.is_nil(res.topic[topic].error)
    assert.is_nil(res.broker[broker].error)
    wait_config(admin, "topic", topic, "retention.ms", "DEFAULT_CONFIG", "604800000")
    wait_config(admin, "broker", broker, "log.cleaner.backoff.ms", "DEFAULT_CONFIG", "15000")
  end)

  it("replaces a whole config with alter_configs", function()
    local topic = new_topic()
    local res = assert(admin:alter_configs({
      topic = { [topic] = { ["cleanup.policy"] = "compact", ["retention.ms"] = 300000 } } }))
    assert.is_nil(res.topic[topic].error)
    wait_config(admin, "topic", topic, "cleanup.policy", "DYNAMIC_TOPIC_CONFIG", "compact")
    res = assert(admin:alter_configs({ topic = { [topic] = { ["retention.ms"] = 200000 } } }))
    assert.is_nil(res.topic[topic].error)
    wait_config(admin, "topic", topic, "retention.ms", "DYNAMIC_TOPIC_CONFIG", "200000")
    wait_config(admin, "topic", topic, "cleanup.policy", "DEFAULT_CONFIG", "delete")
    res = assert(admin:alter_configs({ topic = { [topic] = {} } }))
    assert.is_nil(res.topic[topic].error)
    wait_config(admin, "topic", topic, "retention.ms", "DEFAULT_CONFIG")
    res = assert(admin:alter_configs({ topic = { [topic] = { ["no.such.config"] = 1 } } }))
    assert.are.equal("INVALID_CONFIG", res.topic[topic].error)
  end)

  it("raises on malformed arguments", function()
    assert.has_error(function() admin:describe_configs({ cluster = { "x" } }) end)
    assert.has_error(function() admin:describe_configs({ topic = "x" }) end)
    assert.has_error(function() admin:describe_configs({ topic = { {} } }) end)
    assert.has_error(function()
      admin:incremental_alter_configs({ topic = { t = { { op = "replace", name = "a", value = "1" } } } })
    end)
    assert.has_error(function()
      admin:incremental_alter_configs({ topic = { t = { { op = "set", name = "a" } } } })
    end)
    assert.has_error(function() admin:alter_configs({ topic = { t = { [1] = "x" } } }) end)
    assert.are.same({}, assert(admin:describe_configs({})))
  end)
end)
