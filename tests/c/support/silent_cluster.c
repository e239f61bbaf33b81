/*
 * silent_cluster.c: see silent_cluster.h. Node 1 is a kn_fake_broker
 * whose serve function answers with the generated encoders; node 2 is
 * a listening socket nobody accepts from.
 */
#include "silent_cluster.h"

#include "kn_test.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fake_broker.h"
#include "kn_alloc.h"
#include "proto/generated/kp_api_versions.h"
#include "proto/generated/kp_apis.h"
#include "proto/generated/kp_find_coordinator.h"
#include "proto/generated/kp_metadata.h"

static int bound_socket(int *port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = 0};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    socklen_t sl = sizeof sa;
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
    *port = ntohs(sa.sin_port);
    return fd;
}

int kn_test_closed_port(void) {
    int port;
    close(bound_socket(&port));
    return port;
}

struct kn_silent_listener {
    int fd, port;
};

kn_silent_listener *kn_silent_listener_start(void) {
    kn_silent_listener *sl = kn_calloc(1, sizeof *sl);
    sl->fd = bound_socket(&sl->port);
    /* A deep backlog: every client connection completes its handshake
     * and then waits forever for an answer. */
    assert_int_equal(listen(sl->fd, 512), 0);
    return sl;
}

int kn_silent_listener_port(const kn_silent_listener *sl) { return sl->port; }

void kn_silent_listener_stop(kn_silent_listener *sl) {
    if (!sl)
        return;
    close(sl->fd);
    kn_free(sl);
}

struct kn_silent_cluster {
    kn_fake_broker *fb;
    kn_silent_listener *node2;
    int port;
};

static void answer_metadata(kn_silent_cluster *sc, kn_arena *a, kp_MetadataResponse *r) {
    kp_MetadataResponse_MetadataResponseBroker *b = kn_arena_calloc(a, 2, sizeof(*b));
    b[0] = (kp_MetadataResponse_MetadataResponseBroker){1, kn_str_c("127.0.0.1"), sc->port, {NULL, -1}};
    b[1] = (kp_MetadataResponse_MetadataResponseBroker){2, kn_str_c("127.0.0.1"), kn_silent_listener_port(sc->node2),
                                                         {NULL, -1}};
    r->brokers.items = b;
    r->brokers.count = 2;
    r->cluster_id = kn_str_c("silent-cluster");
    r->controller_id = 2;
    static const kn_uuid topic_id = {{7, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}};
    kp_MetadataResponse_MetadataResponseTopic *t = kn_arena_calloc(a, 1, sizeof(*t));
    kp_MetadataResponse_MetadataResponseTopic_init(t);
    t->name = kn_str_c("t");
    t->topic_id = topic_id;
    kp_MetadataResponse_MetadataResponsePartition *ps = kn_arena_calloc(a, 2, sizeof(*ps));
    int32_t *rep = kn_arena_calloc(a, 1, sizeof(int32_t));
    *rep = 2;
    for (int p = 0; p < 2; p++) {
        kp_MetadataResponse_MetadataResponsePartition_init(&ps[p]);
        ps[p].partition_index = p;
        ps[p].leader_id = 2;
        ps[p].leader_epoch = 0;
        ps[p].replica_nodes = (kp_int32_array){rep, 1};
        ps[p].isr_nodes = (kp_int32_array){rep, 1};
    }
    t->partitions.items = ps;
    t->partitions.count = 2;
    r->topics.items = t;
    r->topics.count = 1;
}

static void answer_find_coordinator(kn_silent_cluster *sc, kn_arena *a, const kn_fake_request *rq,
                                    kp_FindCoordinatorResponse *r) {
    int port2 = kn_silent_listener_port(sc->node2);
    if (rq->ver < 4) {
        r->node_id = 2;
        r->host = kn_str_c("127.0.0.1");
        r->port = port2;
        return;
    }
    /* KIP-699: one answer per key asked for. */
    const kp_FindCoordinatorRequest *q = kn_fake_decode_request(a, rq);
    int32_t n = q->coordinator_keys.count;
    r->coordinators.items = kn_arena_calloc(a, (size_t)n + 1, sizeof(*r->coordinators.items));
    r->coordinators.count = n;
    for (int32_t i = 0; i < n; i++) {
        kp_FindCoordinatorResponse_Coordinator *co = &r->coordinators.items[i];
        co->key = q->coordinator_keys.items[i];
        co->node_id = 2;
        co->host = kn_str_c("127.0.0.1");
        co->port = port2;
        co->error_message.len = -1;
    }
}

/* One request on fd (kn_fake_serve_fn). Anything but the three APIs
 * node 1 serves is read and never answered: node 1 is silent for it. */
static bool serve_one(int fd, void *opaque) {
    kn_silent_cluster *sc = opaque;
    kn_fake_request rq;
    if (!kn_fake_read_request(fd, &rq))
        return false;
    int16_t key = rq.key;
    if (key == KP_API_API_VERSIONS || key == KP_API_METADATA || key == KP_API_FIND_COORDINATOR) {
        kn_arena a;
        kn_arena_init(&a, 0);
        void *body = kn_arena_alloc(&a, kp_api_get(key)->resp_size);
        kp_api_get(key)->resp_init(body);
        if (key == KP_API_API_VERSIONS)
            kn_fake_api_versions(&a, body);
        else if (key == KP_API_METADATA)
            answer_metadata(sc, &a, body);
        else
            answer_find_coordinator(sc, &a, &rq, body);
        size_t len;
        uint8_t *out = kn_fake_frame_response(key, rq.ver, rq.corr, body, rq.ver, &len);
        kn_fake_write_all(fd, out, len);
        kn_free(out);
        kn_arena_destroy(&a);
    }
    kn_free(rq.buf);
    return true;
}

kn_silent_cluster *kn_silent_cluster_start(void) {
    kn_silent_cluster *sc = kn_calloc(1, sizeof *sc);
    sc->node2 = kn_silent_listener_start();
    sc->fb = kn_fake_broker_start(serve_one, sc);
    sc->port = kn_fake_broker_port(sc->fb);
    return sc;
}

int kn_silent_cluster_port(const kn_silent_cluster *sc) { return sc->port; }

void kn_silent_cluster_stop(kn_silent_cluster *sc) {
    if (!sc)
        return;
    kn_fake_broker_stop(sc->fb);
    kn_silent_listener_stop(sc->node2);
    kn_free(sc);
}
