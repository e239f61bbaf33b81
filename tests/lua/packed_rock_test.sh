#!/usr/bin/env bash
# tests/lua/packed_rock_test.sh: the released rock as a user gets it.
# tools/release-tarball --worktree packs kafka-native-<v>-1.src.rock; only
# that file is copied into an empty directory, and `luarocks install` of
# it builds into a fresh tree from there (the build log must never name
# the clone). Then, from the tree alone: rock_smoke.lua (require
# "kafka_native", produce and consume 100 records) and the installed
# kafka-native command (produce 1,000 records from stdin, consume them
# back with -e) against $KAFKA_BOOTSTRAP.
#   packed_rock_test.sh 5.4|5.3|5.1|jit
# "jit" installs into an OpenResty-style layout: luarocks --lua-dir
# pointing at a tree shaped like OpenResty's luajit/ (bin/luajit,
# include/luajit-2.1), built from Debian's luajit2.
set -euo pipefail
abi=${1:?usage: packed_rock_test.sh 5.4|5.3|5.1|jit}
root=$(cd "$(dirname "$0")/../.." && pwd)
[ -n "${KAFKA_BOOTSTRAP:-}" ] || { echo "KAFKA_BOOTSTRAP is not set: start a broker with tools/kafka/broker start" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/kn-packed-rock.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
case "$abi" in
  jit)
    mkdir -p "$tmp/openresty/luajit/bin" "$tmp/openresty/luajit/include"
    ln -s "$(command -v luajit)" "$tmp/openresty/luajit/bin/luajit"
    ln -s /usr/include/luajit-2.1 "$tmp/openresty/luajit/include/luajit-2.1"
    rocks=(luarocks --lua-version 5.1 --lua-dir "$tmp/openresty/luajit"); libver=5.1
    interp="$tmp/openresty/luajit/bin/luajit" ;;
  5.1|5.3|5.4) rocks=(luarocks --lua-version "$abi"); libver=$abi; interp=lua$abi ;;
  *) echo "unknown Lua ABI $abi" >&2; exit 2 ;;
esac

"$root/tools/release-tarball" --worktree --out "$tmp/dist" >/dev/null
mkdir "$tmp/user"
cp "$tmp"/dist/kafka-native-*-1.src.rock "$tmp/user/"
rock=$(cd "$tmp/user" && ls kafka-native-*-1.src.rock)
cd "$tmp/user"
if ! CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2} \
     "${rocks[@]}" install "$rock" --tree "$tmp/tree" >"$tmp/luarocks.log" 2>&1; then
  cat "$tmp/luarocks.log"
  echo "luarocks install $rock failed" >&2
  exit 1
fi
tail -n 1 "$tmp/luarocks.log"
if grep -F -q "$root" "$tmp/luarocks.log"; then
  grep -F "$root" "$tmp/luarocks.log" | head -5
  echo "the build of the packed rock used the clone at $root" >&2
  exit 1
fi
if grep -q -E 'kn_producer_perf|test_[a-z_]+\.c|cmocka' "$tmp/luarocks.log"; then
  echo "the rock built benchmark or test programs" >&2
  exit 1
fi
module="$tmp/tree/lib/lua/$libver/kafka_native.so"
[ -f "$module" ] || { echo "no module at $module" >&2; exit 1; }

cp "$root/tests/lua/rock_smoke.lua" "$tmp/user/"
LUA_CPATH="$tmp/tree/lib/lua/$libver/?.so" "$interp" "$tmp/user/rock_smoke.lua" "$tmp/tree"

# The installed command: luarocks' wrapper runs it under the rock's Lua
# with the tree on its paths; nothing else is set here.
cli="$tmp/tree/bin/kafka-native"
[ -x "$cli" ] || { echo "no kafka-native command at $cli" >&2; exit 1; }
"$cli" version
topic="kn-packed-cli-$abi-$$-$RANDOM"
"$cli" topic create -q -t "$topic" -P 2
seq 1 1000 | sed 's/.*/key-&:value-&/' | "$cli" produce -q -t "$topic" -K :
got=$("$cli" consume -q -t "$topic" -o beginning -e -f '%k=%s\n' | sort -t- -k2 -n)
want=$(seq 1 1000 | sed 's/.*/key-&=value-&/')
"$cli" topic delete -q -t "$topic" || true
[ "$got" = "$want" ] || { echo "the installed kafka-native did not read back the 1,000 records it produced" >&2; exit 1; }
echo "packed_rock_test: $abi: $rock installed with no clone; smoke and the kafka-native command passed"
