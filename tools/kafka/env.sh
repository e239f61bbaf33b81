# Sourced by the tools/kafka and tools/java scripts: one place for the
# Kafka version and the cache layout.
#   KN_CACHE          cache root (default ~/.cache/kafka-native)
#   KN_KAFKA_VERSION  Kafka version whose jars are used (default 4.3.1,
#                     the newest 4.3.x on Maven Central when this was written)
#   KN_KAFKA_LIB      the folder of jars (default $KN_CACHE/kafka-$VERSION/lib)
KN_TOOLS_KAFKA=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
KN_REPO=$(cd "$KN_TOOLS_KAFKA/../.." && pwd)
KN_CACHE=${KN_CACHE:-$HOME/.cache/kafka-native}
KN_KAFKA_VERSION=${KN_KAFKA_VERSION:-4.3.1}
KN_KAFKA_HOME=${KN_KAFKA_HOME:-$KN_CACHE/kafka-$KN_KAFKA_VERSION}
KN_KAFKA_LIB=${KN_KAFKA_LIB:-$KN_KAFKA_HOME/lib}

kn_die() { echo "${0##*/}: $*" >&2; exit 1; }

kn_require_jars() {
  [ -f "$KN_KAFKA_LIB/.complete" ] ||
    kn_die "no Kafka jars in $KN_KAFKA_LIB: run tools/kafka/fetch-jars first"
}
