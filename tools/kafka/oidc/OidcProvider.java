/*
 * OidcProvider: a tiny OAuth 2 / OIDC identity provider for the test
 * harness (tools/kafka/broker starts it): a client-credentials token
 * endpoint that issues RS256 JWTs signed with jose4j (shipped in Kafka's
 * jars), and the JWKS the broker's OAuthBearerValidatorCallbackHandler
 * verifies them with. HTTPS with the harness PKI, on 127.0.0.1 only.
 *
 *   java -cp "$KN_KAFKA_LIB/*" OidcProvider.java --port P --keystore F.p12 --storepass PW
 *        --clients id:secret[,id:secret...] [--lifetime SECONDS] [--audience kafka]
 *
 * POST /token (RFC 6749 section 4.4): HTTP Basic client id and secret,
 * body grant_type=client_credentials[&scope=...]. A wrong client answers
 * 401 {"error":"invalid_client",...}. The token's claims: iss (this
 * server's https://127.0.0.1:P), aud, sub (the client id), scope, iat,
 * exp (now + lifetime), jti. Test knobs in the token URL's query:
 *   lifetime=S   this token lives S seconds instead of --lifetime
 *   delay_ms=N   wait N ms before answering (a slow endpoint)
 *   mode=json    answer 200 with malformed JSON
 *   mode=jwt     answer 200 with an access_token that is not a JWT
 *   mode=500     answer 500 (a retryable error)
 *   fail_after=N answer 503 once N tokens were issued for this exact
 *                query string (a provider that goes down after a login;
 *                add a unique run=... so each test has its own count)
 * GET /jwks: the public key set. GET /stats: tokens issued so far.
 */
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;

import org.jose4j.jwk.JsonWebKey;
import org.jose4j.jwk.JsonWebKeySet;
import org.jose4j.jwk.RsaJsonWebKey;
import org.jose4j.jwk.RsaJwkGenerator;
import org.jose4j.jws.AlgorithmIdentifiers;
import org.jose4j.jws.JsonWebSignature;
import org.jose4j.jwt.JwtClaims;

import java.io.FileInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.KeyStore;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;

public class OidcProvider {
    private static final Map<String, String> clients = new HashMap<>();
    private static final AtomicLong issued = new AtomicLong();
    private static final Map<String, AtomicLong> perQuery = new java.util.concurrent.ConcurrentHashMap<>();
    private static RsaJsonWebKey key;
    private static String issuer;
    private static String audience = "kafka";
    private static long lifetime = 3600;

    public static void main(String[] args) throws Exception {
        int port = 0;
        String keystore = null, storepass = null;
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--port": port = Integer.parseInt(args[i + 1]); break;
                case "--keystore": keystore = args[i + 1]; break;
                case "--storepass": storepass = args[i + 1]; break;
                case "--lifetime": lifetime = Long.parseLong(args[i + 1]); break;
                case "--audience": audience = args[i + 1]; break;
                case "--clients":
                    for (String c : args[i + 1].split(",")) {
                        int k = c.indexOf(':');
                        clients.put(c.substring(0, k), c.substring(k + 1));
                    }
                    break;
                default: throw new IllegalArgumentException("unknown argument " + args[i]);
            }
        }
        key = RsaJwkGenerator.generateJwk(2048);
        key.setKeyId("kn-oidc-" + UUID.randomUUID().toString().substring(0, 8));
        key.setAlgorithm(AlgorithmIdentifiers.RSA_USING_SHA256);
        key.setUse("sig");

        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (FileInputStream in = new FileInputStream(keystore)) {
            ks.load(in, storepass.toCharArray());
        }
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, storepass.toCharArray());
        SSLContext ssl = SSLContext.getInstance("TLS");
        ssl.init(kmf.getKeyManagers(), null, null);

        HttpsServer server = HttpsServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 50);
        server.setHttpsConfigurator(new HttpsConfigurator(ssl));
        issuer = "https://127.0.0.1:" + server.getAddress().getPort();
        server.createContext("/token", OidcProvider::token);
        server.createContext("/jwks", ex -> send(ex, 200, new JsonWebKeySet(key).toJson(JsonWebKey.OutputControlLevel.PUBLIC_ONLY)));
        server.createContext("/stats", ex -> send(ex, 200, "{\"issued\":" + issued.get() + "}"));
        server.setExecutor(Executors.newFixedThreadPool(8));
        server.start();
        System.out.println("oidc: listening on " + issuer);
        System.out.flush();
    }

    private static Map<String, String> form(String s) {
        Map<String, String> m = new HashMap<>();
        if (s == null || s.isEmpty())
            return m;
        for (String kv : s.split("&")) {
            int k = kv.indexOf('=');
            String name = URLDecoder.decode(k < 0 ? kv : kv.substring(0, k), StandardCharsets.UTF_8);
            String value = k < 0 ? "" : URLDecoder.decode(kv.substring(k + 1), StandardCharsets.UTF_8);
            m.put(name, value);
        }
        return m;
    }

    private static void send(HttpExchange ex, int status, String body) throws IOException {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", "application/json");
        ex.getResponseHeaders().set("Cache-Control", "no-store");
        ex.sendResponseHeaders(status, b.length);
        try (OutputStream os = ex.getResponseBody()) {
            os.write(b);
        }
    }

    private static String oauthError(String error, String description) {
        return "{\"error\":\"" + error + "\",\"error_description\":\"" + description + "\"}";
    }

    private static void token(HttpExchange ex) throws IOException {
        try {
            Map<String, String> query = form(ex.getRequestURI().getRawQuery());
            long delay = Long.parseLong(query.getOrDefault("delay_ms", "0"));
            if (delay > 0)
                Thread.sleep(delay);
            if (!"POST".equals(ex.getRequestMethod())) {
                send(ex, 405, oauthError("invalid_request", "POST only"));
                return;
            }
            String body = new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            Map<String, String> params = form(body);
            String auth = ex.getRequestHeaders().getFirst("Authorization");
            String id = null, secret = null;
            if (auth != null && auth.startsWith("Basic ")) {
                String pair = new String(Base64.getDecoder().decode(auth.substring(6)), StandardCharsets.UTF_8);
                int k = pair.indexOf(':');
                if (k > 0) {
                    id = URLDecoder.decode(pair.substring(0, k), StandardCharsets.UTF_8);
                    secret = URLDecoder.decode(pair.substring(k + 1), StandardCharsets.UTF_8);
                }
            }
            if (id == null || !clients.containsKey(id) || !clients.get(id).equals(secret)) {
                send(ex, 401, oauthError("invalid_client", "client authentication failed"));
                return;
            }
            if (!"client_credentials".equals(params.get("grant_type"))) {
                send(ex, 400, oauthError("unsupported_grant_type", "only client_credentials"));
                return;
            }
            String mode = query.getOrDefault("mode", "");
            if (mode.equals("500")) {
                send(ex, 500, oauthError("server_error", "try again"));
                return;
            }
            if (mode.equals("json")) {
                send(ex, 200, "{\"access_token\":\"abc.def");
                return;
            }
            AtomicLong count = perQuery.computeIfAbsent(String.valueOf(ex.getRequestURI().getRawQuery()), k -> new AtomicLong());
            if (query.containsKey("fail_after") && count.get() >= Long.parseLong(query.get("fail_after"))) {
                send(ex, 503, oauthError("temporarily_unavailable", "down for the test"));
                return;
            }
            count.incrementAndGet();
            long life = Long.parseLong(query.getOrDefault("lifetime", Long.toString(lifetime)));
            String jwt;
            if (mode.equals("jwt")) {
                jwt = "not-a-jwt";
            } else {
                JwtClaims claims = new JwtClaims();
                claims.setIssuer(issuer);
                claims.setAudience(audience);
                claims.setSubject(id);
                claims.setIssuedAtToNow();
                claims.setExpirationTimeMinutesInTheFuture(life / 60.0f);
                claims.setGeneratedJwtId();
                String scope = params.get("scope");
                claims.setStringListClaim("scope", Arrays.asList((scope == null || scope.isBlank() ? "kafka" : scope).trim().split(" +")));
                JsonWebSignature jws = new JsonWebSignature();
                jws.setPayload(claims.toJson());
                jws.setKey(key.getPrivateKey());
                jws.setKeyIdHeaderValue(key.getKeyId());
                jws.setAlgorithmHeaderValue(AlgorithmIdentifiers.RSA_USING_SHA256);
                jwt = jws.getCompactSerialization();
            }
            issued.incrementAndGet();
            send(ex, 200, "{\"access_token\":\"" + jwt + "\",\"token_type\":\"Bearer\",\"expires_in\":" + life + "}");
        } catch (Exception e) {
            send(ex, 500, oauthError("server_error", e.getClass().getSimpleName()));
        }
    }
}
