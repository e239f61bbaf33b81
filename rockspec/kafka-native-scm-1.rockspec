-- kafka-native-scm-1.rockspec: builds the kafka_native Lua module from a
-- clone with CMake (`luarocks make rockspec/kafka-native-scm-1.rockspec`).
-- The released rock is rockspec/kafka-native-<version>-1.rockspec (built
-- from a release tarball, tools/release-tarball); keep the two alike.
-- The C core is linked statically into kafka_native.so; only the system
-- libraries below stay shared. luarocks passes the Lua it builds for
-- (headers, ABI) and where to install the module.
rockspec_format = "3.0"
package = "kafka-native"
version = "scm-1"

source = {
  -- `luarocks make` builds the checked-out tree and never fetches this.
  url = "git+file:///kafka-native",
  branch = "main",
}

description = {
  summary = "Apache Kafka client written in C11 from the wire protocol up, for Lua",
  detailed = [[
kafka-native speaks the Kafka protocol itself (no librdkafka), behaves
like the Java client 4.x and takes Kafka's own configuration names.
This rock provides the kafka_native module for Lua 5.1, 5.3, 5.4 and
LuaJIT/OpenResty, and the kafka-native command-line tool (produce from
stdin, consume with formats or JSON, topic metadata, group lag and
offset reset; `kafka-native --help`, docs/cli.md). `luarocks doc
kafka-native` opens the documentation installed with it.
]],
  license = "Apache-2.0",
  labels = { "kafka", "messaging" },
}

-- 5.2 is not supported: the binding's compatibility layer covers 5.1
-- (and LuaJIT), 5.3 and 5.4.
dependencies = {
  "lua >= 5.1, < 5.5, ~= 5.2",
}

external_dependencies = {
  OPENSSL = { header = "openssl/ssl.h", library = "ssl" },
  SASL = { header = "sasl/sasl.h", library = "sasl2" },
  ZSTD = { header = "zstd.h", library = "zstd" },
  LZ4 = { header = "lz4.h", library = "lz4" },
  SNAPPY = { header = "snappy-c.h", library = "snappy" },
  ZLIB = { header = "zlib.h", library = "z" },
  -- No header check: Debian's libcurl dev packages put curl/curl.h in
  -- the multiarch include directory, where LuaRocks does not look
  -- (CMake's FindCURL does).
  CURL = { library = "curl" },
}

build = {
  type = "cmake",
  variables = {
    CMAKE_BUILD_TYPE = "Release",
    CMAKE_INSTALL_PREFIX = "$(PREFIX)",
    -- Where luarocks found each C library: searched first by CMake.
    CMAKE_PREFIX_PATH = "$(OPENSSL_DIR);$(SASL_DIR);$(ZSTD_DIR);$(LZ4_DIR);$(SNAPPY_DIR);$(ZLIB_DIR);$(CURL_DIR)",
    ZLIB_ROOT = "$(ZLIB_DIR)",
    -- Users' compilers may warn where ours do not: warnings stay warnings.
    KN_WERROR = "OFF",
    KN_LUA = "ON",
    -- Only the module: no cmocka tests, no benchmark programs.
    KN_BUILD_TESTS = "OFF",
    KN_BUILD_BENCH = "OFF",
    -- LUA_INCDIR makes the module use luarocks' Lua headers (PUC or
    -- LuaJIT) instead of pkg-config, so one rockspec serves every ABI.
    LUA_INCDIR = "$(LUA_INCDIR)",
    LUA_CMOD_DIR = "$(LIBDIR)",
    OPENSSL_ROOT_DIR = "$(OPENSSL_DIR)",
  },
  -- The command-line tool: luarocks wraps it so it runs under the Lua
  -- the rock was built for, with the rock tree on its paths.
  install = {
    bin = { ["kafka-native"] = "bin/kafka-native" },
    lua = { ["kafka_native.resty"] = "bindings/lua/kafka_native/resty.lua" },
  },
  copy_directories = { "docs" },
}
