#!/usr/bin/env lua5.4
--[[
genconfig.lua: generates core/config/catalog_generated.c, the table of
every producer/consumer/admin configuration key, from the Kafka 4.3
client config catalog (../shared/kafka-protocol/client-configs-4.3.0.json).

The catalog gives keys, Java types and defaults; defaults are often Java
expressions (`30 * 1000`, `CommonClientConfigs.DEFAULT_RETRY_BACKOFF_MS`)
which this script resolves through SYMBOLS below and a tiny arithmetic
evaluator, failing on anything it does not know so a new catalog cannot
slip a wrong default in. The catalog does not carry validators, so
VALIDATORS below restates the ones Java's ProducerConfig, ConsumerConfig,
AdminClientConfig, CommonClientConfigs, SaslConfigs and SslConfigs
declare, plus the class names this library can honour.

Usage:
  lua5.4 tools/gen/genconfig.lua [catalog.json] [output.c]
  lua5.4 tools/gen/genconfig.lua --check [catalog.json] [output.c]
    (regenerates in memory and fails if output.c differs)
Defaults: ../shared/kafka-protocol/client-configs-4.3.0.json relative to
the repository, and core/config/catalog_generated.c.
]]

local INT_MAX = 2147483647
local INT_MIN = -2147483648
local SHORT_MAX = 32767
local SHORT_MIN = -32768
local LONG_MAX = math.maxinteger
local LONG_MIN = math.mininteger

local function die(fmt, ...)
  io.stderr:write("genconfig: " .. string.format(fmt, ...) .. "\n")
  os.exit(1)
end

---------------------------------------------------------------------------
-- Minimal JSON reader (the catalog has no comments; numbers, strings with
-- escapes, arrays, objects, true/false/null).
---------------------------------------------------------------------------
local json_null = setmetatable({}, { __name = "json_null" })

local function json_decode(text)
  local pos = 1
  local function err(msg) die("catalog JSON: %s at byte %d", msg, pos) end
  local function ws()
    pos = text:find("[^ \t\r\n]", pos) or #text + 1
  end
  local value
  local function str()
    pos = pos + 1 -- opening quote
    local out = {}
    while true do
      local c = text:sub(pos, pos)
      if c == "" then err("unterminated string") end
      if c == '"' then pos = pos + 1; break end
      if c == "\\" then
        local e = text:sub(pos + 1, pos + 1)
        local map = { ['"'] = '"', ["\\"] = "\\", ["/"] = "/", b = "\b",
                      f = "\f", n = "\n", r = "\r", t = "\t" }
        if map[e] then
          out[#out + 1] = map[e]; pos = pos + 2
        elseif e == "u" then
          local hex = text:sub(pos + 2, pos + 5)
          if not hex:match("^%x%x%x%x$") then err("bad \\u escape") end
          local cp = tonumber(hex, 16)
          pos = pos + 6
          if cp >= 0xD800 and cp <= 0xDBFF and text:sub(pos, pos + 1) == "\\u" then
            local lo = tonumber(text:sub(pos + 2, pos + 5), 16)
            if lo and lo >= 0xDC00 and lo <= 0xDFFF then
              cp = 0x10000 + (cp - 0xD800) * 0x400 + (lo - 0xDC00)
              pos = pos + 6
            end
          end
          out[#out + 1] = utf8.char(cp)
        else
          err("bad escape")
        end
      else
        local s, e = text:find('^[^"\\]+', pos)
        out[#out + 1] = text:sub(s, e)
        pos = e + 1
      end
    end
    return table.concat(out)
  end
  function value()
    ws()
    local c = text:sub(pos, pos)
    if c == "{" then
      pos = pos + 1
      local obj = {}
      ws()
      if text:sub(pos, pos) == "}" then pos = pos + 1; return obj end
      while true do
        ws()
        if text:sub(pos, pos) ~= '"' then err("expected key") end
        local k = str()
        ws()
        if text:sub(pos, pos) ~= ":" then err("expected ':'") end
        pos = pos + 1
        obj[k] = value()
        ws()
        local d = text:sub(pos, pos)
        pos = pos + 1
        if d == "}" then return obj end
        if d ~= "," then err("expected ',' or '}'") end
      end
    elseif c == "[" then
      pos = pos + 1
      local arr = {}
      ws()
      if text:sub(pos, pos) == "]" then pos = pos + 1; return arr end
      while true do
        arr[#arr + 1] = value()
        ws()
        local d = text:sub(pos, pos)
        pos = pos + 1
        if d == "]" then return arr end
        if d ~= "," then err("expected ',' or ']'") end
      end
    elseif c == '"' then
      return str()
    elseif text:sub(pos, pos + 3) == "true" then
      pos = pos + 4; return true
    elseif text:sub(pos, pos + 4) == "false" then
      pos = pos + 5; return false
    elseif text:sub(pos, pos + 3) == "null" then
      pos = pos + 4; return json_null
    else
      local s, e = text:find("^-?%d+%.?%d*[eE]?[-+]?%d*", pos)
      if not s then err("unexpected character '" .. c .. "'") end
      local n = text:sub(s, e)
      pos = e + 1
      return math.tointeger(tonumber(n)) or tonumber(n)
    end
  end
  local v = value()
  ws()
  if pos <= #text then err("trailing data") end
  return v
end

---------------------------------------------------------------------------
-- Java default expressions.
---------------------------------------------------------------------------

-- Symbols the catalog uses as defaults, with the value Java 4.3 gives
-- them. JVM-dependent ones (key/trust manager algorithms) take the
-- OpenJDK defaults, which is what the Java client reports.
local SYMBOLS = {
  ["Integer.MAX_VALUE"] = tostring(INT_MAX),
  ["ClientDnsLookup.USE_ALL_DNS_IPS.toString()"] = "use_all_dns_ips",
  ["Sensor.RecordingLevel.INFO.toString()"] = "INFO",
  ["JmxReporter.class.getName()"] = "org.apache.kafka.common.metrics.JmxReporter",
  ["List.of()"] = "",
  ["List.of(RangeAssignor.class, CooperativeStickyAssignor.class)"] =
    "org.apache.kafka.clients.consumer.RangeAssignor,"
    .. "org.apache.kafka.clients.consumer.CooperativeStickyAssignor",
  ["CompressionType.NONE.name"] = "none",
  ["CompressionType.GZIP.defaultLevel()"] = "-1",  -- Deflater.DEFAULT_COMPRESSION
  ["CompressionType.LZ4.defaultLevel()"] = "9",
  ["CompressionType.ZSTD.defaultLevel()"] = "3",
  ["AutoOffsetResetStrategy.LATEST.name()"] = "latest",
  ["ShareAcknowledgementMode.IMPLICIT.name()"] = "implicit",
  ["DEFAULT_SHARE_ACQUIRE_MODE"] = "batch_optimized",
  ["CommonClientConfigs.DEFAULT_METADATA_RECOVERY_REBOOTSTRAP_TRIGGER_MS"] = "300000",
  ["DEFAULT_METADATA_RECOVERY_REBOOTSTRAP_TRIGGER_MS"] = "300000",
  ["CommonClientConfigs.DEFAULT_METADATA_RECOVERY_STRATEGY"] = "rebootstrap",
  ["DEFAULT_METADATA_RECOVERY_STRATEGY"] = "rebootstrap",
  ["CommonClientConfigs.DEFAULT_RETRY_BACKOFF_MAX_MS"] = "1000",
  ["CommonClientConfigs.DEFAULT_RETRY_BACKOFF_MS"] = "100",
  ["CommonClientConfigs.DEFAULT_SECURITY_PROTOCOL"] = "PLAINTEXT",
  ["DEFAULT_SECURITY_PROTOCOL"] = "PLAINTEXT",
  ["CommonClientConfigs.DEFAULT_SOCKET_CONNECTION_SETUP_TIMEOUT_MAX_MS"] = "30000",
  ["CommonClientConfigs.DEFAULT_SOCKET_CONNECTION_SETUP_TIMEOUT_MS"] = "10000",
  ["DEFAULT_ALLOW_AUTO_CREATE_TOPICS"] = "true",
  ["DEFAULT_CLIENT_RACK"] = "",
  ["DEFAULT_EXCLUDE_INTERNAL_TOPICS"] = "true",
  ["DEFAULT_FETCH_MAX_BYTES"] = "52428800",        -- 50 * 1024 * 1024
  ["DEFAULT_FETCH_MAX_WAIT_MS"] = "500",
  ["DEFAULT_FETCH_MIN_BYTES"] = "1",
  ["DEFAULT_GROUP_PROTOCOL"] = "classic",
  ["DEFAULT_GROUP_REMOTE_ASSIGNOR"] = json_null,
  ["DEFAULT_ISOLATION_LEVEL"] = "read_uncommitted",
  ["DEFAULT_MAX_PARTITION_FETCH_BYTES"] = "1048576", -- 1 * 1024 * 1024
  ["DEFAULT_MAX_POLL_RECORDS"] = "500",
  ["DEFAULT_SASL_LOGIN_RETRY_BACKOFF_MAX_MS"] = "10000",
  ["DEFAULT_SASL_LOGIN_RETRY_BACKOFF_MS"] = "100",
  ["DEFAULT_SASL_OAUTHBEARER_ASSERTION_ALGORITHM"] = "RS256",
  ["DEFAULT_SASL_OAUTHBEARER_ASSERTION_CLAIM_EXP_SECONDS"] = "300",
  ["DEFAULT_SASL_OAUTHBEARER_ASSERTION_CLAIM_JTI_INCLUDE"] = "false",
  ["DEFAULT_SASL_OAUTHBEARER_ASSERTION_CLAIM_NBF_SECONDS"] = "60",
  ["DEFAULT_SASL_OAUTHBEARER_CLOCK_SKEW_SECONDS"] = "30",
  ["DEFAULT_SASL_OAUTHBEARER_HEADER_URLENCODE"] = "false",
  ["DEFAULT_SASL_OAUTHBEARER_JWKS_ENDPOINT_REFRESH_MS"] = "3600000", -- 60 * 60 * 1000
  ["DEFAULT_SASL_OAUTHBEARER_JWKS_ENDPOINT_RETRY_BACKOFF_MAX_MS"] = "10000",
  ["DEFAULT_SASL_OAUTHBEARER_JWKS_ENDPOINT_RETRY_BACKOFF_MS"] = "100",
  ["DEFAULT_SASL_OAUTHBEARER_JWT_RETRIEVER_CLASS"] =
    "org.apache.kafka.common.security.oauthbearer.DefaultJwtRetriever",
  ["DEFAULT_SASL_OAUTHBEARER_JWT_VALIDATOR_CLASS"] =
    "org.apache.kafka.common.security.oauthbearer.DefaultJwtValidator",
  ["DEFAULT_SASL_OAUTHBEARER_SCOPE_CLAIM_NAME"] = "scope",
  ["DEFAULT_SASL_OAUTHBEARER_SUB_CLAIM_NAME"] = "sub",
  ["SaslConfigs.DEFAULT_KERBEROS_KINIT_CMD"] = "/usr/bin/kinit",
  ["SaslConfigs.DEFAULT_KERBEROS_MIN_TIME_BEFORE_RELOGIN"] = "60000", -- 1 * 60 * 1000L
  ["SaslConfigs.DEFAULT_KERBEROS_TICKET_RENEW_JITTER"] = "0.05",
  ["SaslConfigs.DEFAULT_KERBEROS_TICKET_RENEW_WINDOW_FACTOR"] = "0.8",
  ["SaslConfigs.DEFAULT_LOGIN_REFRESH_BUFFER_SECONDS"] = "300",
  ["SaslConfigs.DEFAULT_LOGIN_REFRESH_MIN_PERIOD_SECONDS"] = "60",
  ["SaslConfigs.DEFAULT_LOGIN_REFRESH_WINDOW_FACTOR"] = "0.8",
  ["SaslConfigs.DEFAULT_LOGIN_REFRESH_WINDOW_JITTER"] = "0.05",
  ["SaslConfigs.DEFAULT_SASL_MECHANISM"] = "GSSAPI",
  ["SslConfigs.DEFAULT_SSL_ENABLED_PROTOCOLS"] = "TLSv1.2,TLSv1.3",
  ["SslConfigs.DEFAULT_SSL_ENDPOINT_IDENTIFICATION_ALGORITHM"] = "https",
  ["SslConfigs.DEFAULT_SSL_KEYMANGER_ALGORITHM"] = "SunX509",
  ["SslConfigs.DEFAULT_SSL_KEYSTORE_TYPE"] = "JKS",
  ["SslConfigs.DEFAULT_SSL_PROTOCOL"] = "TLSv1.3",
  ["SslConfigs.DEFAULT_SSL_TRUSTMANAGER_ALGORITHM"] = "PKIX",
  ["SslConfigs.DEFAULT_SSL_TRUSTSTORE_TYPE"] = "JKS",
}

local NO_DEFAULT = {}  -- marker: the key is required

-- `30 * 1000`, `32 * 1024 * 1024L`, `50L`: products of integer literals.
local function eval_arith(expr)
  local product = nil
  for term in (expr .. "*"):gmatch("%s*([^*]-)%s*%*") do
    local digits = term:match("^(%-?%d+)[lL]?$")
    if not digits then return nil end
    local n = math.tointeger(tonumber(digits))
    product = product and product * n or n
  end
  return product and tostring(product) or nil
end

-- Returns the default as a string, json_null for a null default, or
-- NO_DEFAULT.
local function resolve_default(key, d)
  if d == nil or d == json_null then return NO_DEFAULT end
  local kind, v = d.kind, d.value
  if kind == "null" then return json_null end
  if kind == "boolean" then return v and "true" or "false" end
  if kind == "integer" then
    if math.type(v) ~= "integer" then die("%s: integer default %s", key, tostring(v)) end
    return tostring(v)
  end
  if kind == "string" then return v end
  if kind == "symbol" then
    if v == "NO_DEFAULT_VALUE" or v == "ConfigDef.NO_DEFAULT_VALUE" then return NO_DEFAULT end
    if SYMBOLS[v] ~= nil then return SYMBOLS[v] end
    local n = eval_arith(v)
    if n then return n end
    die("%s: unknown default symbol %q: add it to SYMBOLS with Java's value", key, v)
  end
  die("%s: unknown default kind %q", key, tostring(kind))
end

---------------------------------------------------------------------------
-- Validators (Java's, restated; see the file header).
---------------------------------------------------------------------------
local SERIALIZERS = {
  "org.apache.kafka.common.serialization.ByteArraySerializer",
  "org.apache.kafka.common.serialization.ByteBufferSerializer",
  "org.apache.kafka.common.serialization.BytesSerializer",
  "org.apache.kafka.common.serialization.StringSerializer",
}
local DESERIALIZERS = {
  "org.apache.kafka.common.serialization.ByteArrayDeserializer",
  "org.apache.kafka.common.serialization.ByteBufferDeserializer",
  "org.apache.kafka.common.serialization.BytesDeserializer",
  "org.apache.kafka.common.serialization.StringDeserializer",
}

local VALIDATORS = {
  -- common
  ["client.dns.lookup"] = { enum = { "use_all_dns_ips", "resolve_canonical_bootstrap_servers_only" } },
  ["security.protocol"] = { enum = { "PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL" }, icase = true },
  ["metadata.recovery.strategy"] = { enum = { "none", "rebootstrap" }, icase = true },
  ["metadata.recovery.rebootstrap.trigger.ms"] = { min = 0 },
  ["metrics.recording.level"] = { enum = { "INFO", "DEBUG", "TRACE" } },
  ["metric.reporters"] = { supported = { "org.apache.kafka.common.metrics.JmxReporter" } },
  ["config.providers"] = { supported = {} },
  ["security.providers"] = { supported = {} },
  ["metadata.max.age.ms"] = { min = 0 },
  ["metadata.max.idle.ms"] = { min = 5000 },
  ["send.buffer.bytes"] = { min = -1 },
  ["receive.buffer.bytes"] = { min = -1 },
  ["reconnect.backoff.ms"] = { min = 0 },
  ["reconnect.backoff.max.ms"] = { min = 0 },
  ["retry.backoff.ms"] = { min = 0 },
  ["retry.backoff.max.ms"] = { min = 0 },
  ["request.timeout.ms"] = { min = 0 },
  ["default.api.timeout.ms"] = { min = 0 },
  ["metrics.sample.window.ms"] = { min = 0 },
  ["metrics.num.samples"] = { min = 1 },
  ["retries"] = { min = 0, max = INT_MAX },
  -- producer
  ["acks"] = { enum = { "all", "-1", "0", "1" } },
  ["buffer.memory"] = { min = 0 },
  ["compression.type"] = { enum = { "none", "gzip", "snappy", "lz4", "zstd" } },
  ["compression.gzip.level"] = { min = 1, max = 9, extra = -1 },
  ["compression.lz4.level"] = { min = 1, max = 17 },
  ["compression.zstd.level"] = { min = -131072, max = 22 },
  ["batch.size"] = { min = 0 },
  ["partitioner.availability.timeout.ms"] = { min = 0 },
  ["linger.ms"] = { min = 0 },
  ["delivery.timeout.ms"] = { min = 0 },
  ["max.request.size"] = { min = 0 },
  ["max.block.ms"] = { min = 0 },
  ["max.in.flight.requests.per.connection"] = { min = 1 },
  ["key.serializer"] = { supported = SERIALIZERS },
  ["value.serializer"] = { supported = SERIALIZERS },
  -- the default partitioner is built in; custom ones are C/Lua hooks
  ["partitioner.class"] = { supported = {} },
  -- interceptors are C/Lua hooks, not class names
  ["interceptor.classes"] = { supported = {} },
  ["transactional.id"] = { nonempty = true },
  -- consumer
  ["group.instance.id"] = { nonempty = true },
  ["partition.assignment.strategy"] = { supported = {
    "org.apache.kafka.clients.consumer.RangeAssignor",
    "org.apache.kafka.clients.consumer.RoundRobinAssignor",
    "org.apache.kafka.clients.consumer.StickyAssignor",
    "org.apache.kafka.clients.consumer.CooperativeStickyAssignor",
  } },
  ["auto.commit.interval.ms"] = { min = 0 },
  ["max.partition.fetch.bytes"] = { min = 0 },
  ["fetch.min.bytes"] = { min = 0 },
  ["fetch.max.bytes"] = { min = 0 },
  ["fetch.max.wait.ms"] = { min = 0 },
  ["auto.offset.reset"] = { offset_reset = true },
  ["key.deserializer"] = { supported = DESERIALIZERS },
  ["value.deserializer"] = { supported = DESERIALIZERS },
  ["max.poll.records"] = { min = 1 },
  ["max.poll.interval.ms"] = { min = 1 },
  ["isolation.level"] = { enum = { "read_committed", "read_uncommitted" } },
  ["group.protocol"] = { enum = { "classic", "consumer" }, icase = true },
  ["share.acknowledgement.mode"] = { enum = { "implicit", "explicit" } },
  ["share.acquire.mode"] = { enum = { "batch_optimized", "record_limit" } },
  -- SASL
  ["sasl.login.refresh.window.factor"] = { min = 0.5, max = 1.0 },
  ["sasl.login.refresh.window.jitter"] = { min = 0.0, max = 0.25 },
  ["sasl.login.refresh.min.period.seconds"] = { min = 0, max = 900 },
  ["sasl.login.refresh.buffer.seconds"] = { min = 0, max = 3600 },
  ["sasl.oauthbearer.assertion.algorithm"] = { enum = { "ES256", "RS256" }, icase = true },
  ["sasl.oauthbearer.assertion.claim.exp.seconds"] = { min = 0, max = 86400 },
  ["sasl.oauthbearer.assertion.claim.nbf.seconds"] = { min = 0, max = 3600 },
  ["sasl.oauthbearer.jwt.retriever.class"] = { supported = {
    "org.apache.kafka.common.security.oauthbearer.DefaultJwtRetriever" } },
  ["sasl.oauthbearer.jwt.validator.class"] = { supported = {
    "org.apache.kafka.common.security.oauthbearer.DefaultJwtValidator" } },
  ["sasl.client.callback.handler.class"] = { supported = {} },
  -- OAUTHBEARER: the token endpoint (KIP-768) or the unsecured JWS login.
  ["sasl.login.callback.handler.class"] = { supported = {
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
    "org.apache.kafka.common.security.oauthbearer.internals.unsecured.OAuthBearerUnsecuredLoginCallbackHandler" } },
  ["sasl.login.class"] = { supported = {} },
  -- SSL
  ["ssl.engine.factory.class"] = { supported = {} },
}

local TYPES = {
  boolean = "KN_CONF_BOOLEAN", short = "KN_CONF_SHORT", int = "KN_CONF_INT",
  long = "KN_CONF_LONG", double = "KN_CONF_DOUBLE", string = "KN_CONF_STRING",
  list = "KN_CONF_LIST", class = "KN_CONF_CLASS", password = "KN_CONF_PASSWORD",
}
local INT_BOUNDS = {
  short = { SHORT_MIN, SHORT_MAX }, int = { INT_MIN, INT_MAX }, long = { LONG_MIN, LONG_MAX },
}
local CLIENTS = { producer = 1, consumer = 2, admin = 4 }
local CLIENT_IDX = { producer = 1, consumer = 2, admin = 3 }


---------------------------------------------------------------------------
-- C emission.
---------------------------------------------------------------------------
local function cstr(s)
  if s == nil or s == json_null then return "NULL" end
  local out = s:gsub('[\\"]', "\\%0"):gsub("\n", "\\n"):gsub("\t", "\\t")
  out = out:gsub("[%z\1-\31\127-\255]", function(c) return string.format("\\%03o", c:byte()) end)
  return '"' .. out .. '"'
end

local function fmt_double(v)
  local s = string.format("%.17g", v)
  if not s:find("[.eE]") then s = s .. ".0" end
  return s
end

local function generate(catalog_path)
  local f = io.open(catalog_path, "rb") or die("cannot open %s", catalog_path)
  local cat = json_decode(f:read("a"))
  f:close()
  if type(cat.clients) ~= "table" then die("catalog has no clients[]") end

  local keys, order = {}, {}
  for _, client in ipairs(cat.clients) do
    local bit, idx = CLIENTS[client.client], CLIENT_IDX[client.client]
    if not bit then die("unknown client %q", tostring(client.client)) end
    for _, c in ipairs(client.configs) do
      -- Entries with an "origin" are another client's runtime knobs
      -- (kacrab's socket tuning), not Java configuration keys.
      if c.origin == nil then
        local name = c.key
        if not TYPES[c.java_type] then die("%s: unknown type %q", name, tostring(c.java_type)) end
        local k = keys[name]
        if not k then
          k = { name = name, jtype = c.java_type, clients = 0, required = 0, def = {} }
          keys[name] = k
          order[#order + 1] = name
        elseif k.jtype ~= c.java_type then
          die("%s: type %s for %s but %s elsewhere", name, c.java_type, client.client, k.jtype)
        end
        k.clients = k.clients | bit
        local d = resolve_default(name, c.default)
        if d == NO_DEFAULT then
          k.required = k.required | bit
          k.def[idx] = json_null
        else
          k.def[idx] = d
        end
      end
    end
  end
  for vk in pairs(VALIDATORS) do
    if not keys[vk] then die("validator for %q, which the catalog does not have", vk) end
  end
  table.sort(order)

  local out = {}
  local function w(s) out[#out + 1] = s end
  w("/*\n")
  w(" * catalog_generated.c: every producer, consumer and admin configuration\n")
  w(" * key of the Java client, with type, per-client defaults and validator.\n")
  w(" *\n")
  w(" * Generated by tools/gen/genconfig.lua from client-configs-4.3.0.json\n")
  w(" * (" .. tostring(cat.source_ref) .. "); do not edit. Regenerate with\n")
  w(" * tools/gen/check-config --update; CI runs tools/gen/check-config.\n")
  w(" * Keys, types and defaults only: the user-facing descriptions are the\n")
  w(" * project's own, in docs/configuration.md.\n")
  w(" */\n")
  w("#include \"config/catalog.h\"\n\n")

  -- value lists first, one per key that needs one
  local lists = {}
  for _, name in ipairs(order) do
    local v = VALIDATORS[name]
    local vals = v and (v.enum or v.supported)
    if vals and #vals > 0 then
      local id = "kn_cv_" .. name:gsub("[^%w]", "_")
      lists[name] = id
      local items = {}
      for _, s in ipairs(vals) do items[#items + 1] = cstr(s) end
      items[#items + 1] = "NULL"
      w("static const char *const " .. id .. "[] = {" .. table.concat(items, ", ") .. "};\n")
    end
  end
  w("static const char *const kn_cv_none[] = {NULL};\n\n")

  w("const kn_conf_key kn_conf_catalog[] = {\n")
  for _, name in ipairs(order) do
    local k, v = keys[name], VALIDATORS[name] or {}
    local parts = {}
    local function p(s) parts[#parts + 1] = s end
    p(".name = " .. cstr(name))
    p(".type = " .. TYPES[k.jtype])
    local function mask(m)
      local t = {}
      if m & 1 ~= 0 then t[#t + 1] = "KN_CLIENT_PRODUCER" end
      if m & 2 ~= 0 then t[#t + 1] = "KN_CLIENT_CONSUMER" end
      if m & 4 ~= 0 then t[#t + 1] = "KN_CLIENT_ADMIN" end
      return #t > 0 and table.concat(t, " | ") or "0"
    end
    p(".clients = " .. mask(k.clients))
    if k.required ~= 0 then p(".required = " .. mask(k.required)) end
    local defs = {}
    for i = 1, 3 do defs[i] = cstr(k.def[i]) end
    p(".def = {" .. table.concat(defs, ", ") .. "}")
    local numeric = k.jtype == "short" or k.jtype == "int" or k.jtype == "long"
    if v.min or v.max then
      if not (numeric or k.jtype == "double") then die("%s: range on a %s", name, k.jtype) end
      p(".check = " .. (v.extra and "KN_CHECK_RANGE_OR" or "KN_CHECK_RANGE"))
      if k.jtype == "double" then
        if v.min then p(".has_min = 1, .dmin = " .. fmt_double(v.min)) end
        if v.max then p(".has_max = 1, .dmax = " .. fmt_double(v.max)) end
      else
        local b = INT_BOUNDS[k.jtype]
        for _, bound in ipairs({ v.min, v.max }) do
          if math.type(bound) ~= "integer" and bound ~= nil then die("%s: bound", name) end
          if bound and (bound < b[1] or bound > b[2]) then die("%s: bound out of type", name) end
        end
        if v.min then p(".has_min = 1, .imin = " .. (v.min == LONG_MIN and "INT64_MIN" or tostring(v.min))) end
        if v.max then p(".has_max = 1, .imax = " .. (v.max == LONG_MAX and "INT64_MAX" or tostring(v.max))) end
        if v.extra then p(".extra = " .. tostring(v.extra)) end
      end
    elseif v.enum then
      if k.jtype ~= "string" then die("%s: enum on a %s", name, k.jtype) end
      p(".check = KN_CHECK_ENUM")
      if v.icase then p(".icase = 1") end
      p(".values = " .. lists[name])
    elseif v.nonempty then
      p(".check = KN_CHECK_NONEMPTY")
    elseif v.offset_reset then
      p(".check = KN_CHECK_OFFSET_RESET")
    elseif v.supported then
      p(".check = KN_CHECK_SUPPORTED")
      p(".values = " .. (lists[name] or "kn_cv_none"))
    end
    w("    {" .. table.concat(parts, ",\n     ") .. "},\n")
  end
  w("};\n\n")
  w("const size_t kn_conf_catalog_count = sizeof(kn_conf_catalog) / sizeof(kn_conf_catalog[0]);\n")
  return table.concat(out)
end

---------------------------------------------------------------------------
local args = { ... }
local check = false
if args[1] == "--check" then check = true; table.remove(args, 1) end
local script_dir = (arg and arg[0] or ""):match("^(.*)/[^/]*$") or "."
local repo = script_dir .. "/../.."
local catalog_path = args[1] or (repo .. "/../shared/kafka-protocol/client-configs-4.3.0.json")
local out_path = args[2] or (repo .. "/core/config/catalog_generated.c")

local text = generate(catalog_path)
if check then
  local f = io.open(out_path, "rb")
  local old = f and f:read("a")
  if f then f:close() end
  if old ~= text then
    io.stderr:write("genconfig: " .. out_path .. " is stale: run tools/gen/check-config --update\n")
    os.exit(1)
  end
  print("genconfig: " .. out_path .. " is up to date")
else
  local f = io.open(out_path, "wb") or die("cannot write %s", out_path)
  f:write(text)
  f:close()
end
