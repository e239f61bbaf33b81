#!/usr/bin/env bash
# tests/lua/luarocks_test.sh: `luarocks make` from a clean copy of the
# source into a fresh tree, then a script using only
# require "kafka_native" against $KAFKA_BOOTSTRAP (rock_smoke.lua).
#   luarocks_test.sh 5.4|5.3|5.1|jit
# "jit" builds with luarocks' 5.1 settings and LuaJIT's headers
# (what OpenResty loads) and runs under luajit. The copy holds the files
# git knows plus untracked ones not ignored (never build directories);
# the temp dir is removed on the way out, whatever happens.
set -euo pipefail
abi=${1:?usage: luarocks_test.sh 5.4|5.3|5.1|jit}
root=$(cd "$(dirname "$0")/../.." && pwd)
[ -n "${KAFKA_BOOTSTRAP:-}" ] || { echo "KAFKA_BOOTSTRAP is not set: start a broker with tools/kafka/broker start" >&2; exit 1; }

case "$abi" in
  jit) rocks_ver=5.1; interp=luajit; extra=(LUA_INCDIR=/usr/include/luajit-2.1); libver=5.1 ;;
  5.1|5.3|5.4) rocks_ver=$abi; interp=lua$abi; extra=(); libver=$abi ;;
  *) echo "unknown Lua ABI $abi" >&2; exit 2 ;;
esac

tmp=$(mktemp -d "${TMPDIR:-/tmp}/kn-rock-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/src"
(cd "$root" && git ls-files -co --exclude-standard -z | tar --null -T - -cf -) | tar -xf - -C "$tmp/src"
[ ! -e "$tmp/src/build" ] || { echo "the copy holds a build dir" >&2; exit 1; }

cd "$tmp/src"
if ! CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2} \
     luarocks --lua-version "$rocks_ver" make rockspec/kafka-native-scm-1.rockspec \
       --tree "$tmp/tree" "${extra[@]}" >"$tmp/luarocks.log" 2>&1; then
  cat "$tmp/luarocks.log"
  echo "luarocks make failed" >&2
  exit 1
fi
tail -n 1 "$tmp/luarocks.log"
module="$tmp/tree/lib/lua/$libver/kafka_native.so"
[ -f "$module" ] || { echo "no module at $module" >&2; exit 1; }
# The OpenResty helper (pure Lua) is installed beside it.
helper="$tmp/tree/share/lua/$libver/kafka_native/resty.lua"
[ -f "$helper" ] || { echo "no kafka_native.resty at $helper" >&2; exit 1; }
cd /
LUA_CPATH="$tmp/tree/lib/lua/$libver/?.so" LUA_PATH="$root/tests/lua/?.lua" \
  "$interp" "$root/tests/lua/rock_smoke.lua" "$tmp/tree"
