# Sourced by tools/kafka/broker: the local OIDC identity provider
# (tools/kafka/oidc/OidcProvider.java) and the broker's OIDC listener.
#
# The provider is one JVM per cluster on 127.0.0.1 over HTTPS with the
# harness PKI (DIR/tls): a client-credentials token endpoint and the JWKS.
# It is compiled once into $KN_CACHE/oidc-<checksum> and started while the
# nodes' storage is formatted, so the broker start waits for nothing extra.
# The OIDC listener (SASL_SSL, OAUTHBEARER only) validates tokens with
# Kafka's OAuthBearerValidatorCallbackHandler against the provider's JWKS,
# audience "kafka" and the provider as issuer; sessions end with the token
# (connections.max.reauth.ms is set, so the broker enforces the token's exp
# and clients re-authenticate, KIP-368).
#
# Files: DIR/oidc/{port,pid,server.p12,out.log}. Knobs: KN_OIDC_LIFETIME
# (token lifetime in seconds, default 3600; a token URL's ?lifetime=S
# overrides it per client).

OIDC_CLIENT_ID=kn-client
OIDC_CLIENT_SECRET=kn-client-secret
SECURE_LISTENERS="$SECURE_LISTENERS OIDC:SASL_SSL"

oidc_dir() { echo "$DIR/oidc"; }
oidc_port() { cat "$(oidc_dir)/port" 2>/dev/null || true; }

# The provider's classes, compiled once per source version.
oidc_classes() {
  local src=$KN_TOOLS_KAFKA/oidc/OidcProvider.java sum out
  sum=$(cksum < "$src" | cut -d' ' -f1)
  out=$KN_CACHE/oidc-$sum
  if [ ! -f "$out/OidcProvider.class" ]; then
    mkdir -p "$out.tmp.$$"
    javac -nowarn -cp "$KN_KAFKA_LIB/*" -d "$out.tmp.$$" "$src" >&2 || kn_die "could not compile $src"
    rm -rf "$out"; mv "$out.tmp.$$" "$out"
  fi
  echo "$out"
}

# oidc_start: picks a port not among cmd_start's $ports, launches the
# provider detached (it needs DIR/tls), returns at once.
oidc_start() {
  local d p cls
  d=$(oidc_dir)
  mkdir -p "$d"
  while :; do
    p=$(pick_ports 1)
    case " ${ports[*]} " in *" $p "*) continue ;; esac
    break
  done
  echo "$p" > "$d/port"
  openssl pkcs12 -export -in "$DIR/tls/broker-keystore.pem" -inkey "$DIR/tls/broker-keystore.pem" \
    -passout pass:store-pass -out "$d/server.p12" 2>/dev/null || kn_die "oidc: could not make $d/server.p12"
  cls=$(oidc_classes)
  setsid nohup bash -c 'echo $$ > "$1/pid"; shift; exec "$@"' _ "$d" \
    java -Xmx128m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xshare:auto \
      -Dlog4j2.configurationFile="$KN_TOOLS_KAFKA/log4j2-tools.properties" \
      -cp "$cls:$KN_KAFKA_LIB/*" OidcProvider --port "$p" --keystore "$d/server.p12" \
      --storepass store-pass --clients "$OIDC_CLIENT_ID:$OIDC_CLIENT_SECRET" \
      --lifetime "${KN_OIDC_LIFETIME:-3600}" --audience kafka \
    > "$d/out.log" 2>&1 < /dev/null &
}

# oidc_wait: bounded wait until the provider listens (the broker fetches
# the JWKS when its OIDC listener starts).
oidc_wait() {
  local d i=0
  d=$(oidc_dir)
  while ! grep -q "listening" "$d/out.log" 2>/dev/null; do
    if [ $i -ge 1200 ] || { [ -s "$d/pid" ] && ! alive "$(cat "$d/pid")"; }; then
      echo "broker: the OIDC provider did not start:" >&2
      cat "$d/out.log" >&2 2>/dev/null || true
      return 1
    fi
    sleep 0.1; i=$((i + 1))
  done
}

oidc_stop() {
  local p
  p=$(cat "$(oidc_dir)/pid" 2>/dev/null || true)
  if alive "$p"; then stop_pids 10 "$p"; fi
  return 0
}

# JVM option: Kafka 4 only fetches OAuth URLs named in this allow-list.
oidc_jvm_opts() {
  local p; p=$(oidc_port)
  [ -n "$p" ] && echo "-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls=https://127.0.0.1:$p/jwks,https://127.0.0.1:$p/token"
  return 0
}

oidc_props() {
  local t=$DIR/tls p
  p=$(oidc_port)
  cat <<EOP
# OIDC: OAUTHBEARER validated against the local provider (tools/kafka/oidc.sh).
listener.name.oidc.sasl.enabled.mechanisms=OAUTHBEARER
listener.name.oidc.oauthbearer.sasl.server.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler
listener.name.oidc.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="admin" ssl.truststore.type="PEM" ssl.truststore.location="$t/ca.pem";
listener.name.oidc.sasl.oauthbearer.jwks.endpoint.url=https://127.0.0.1:$p/jwks
listener.name.oidc.sasl.oauthbearer.expected.audience=kafka
listener.name.oidc.sasl.oauthbearer.expected.issuer=https://127.0.0.1:$p
listener.name.oidc.oauthbearer.connections.max.reauth.ms=3600000
EOP
}

oidc_env() {
  local p; p=$(oidc_port)
  [ -n "$p" ] || return 0
  echo "export KN_OIDC_URL=https://127.0.0.1:$p"
  echo "export KN_OIDC_TOKEN_URL=https://127.0.0.1:$p/token"
  echo "export KN_OIDC_CLIENT_ID=$OIDC_CLIENT_ID"
  echo "export KN_OIDC_CLIENT_SECRET=$OIDC_CLIENT_SECRET"
}
