/*
 * settings.h: the consumer's settings, read once from its kn_conf at
 * creation (settings.c) into knc_config, held by value in struct
 * kn_consumer (c->cfg). Written only before the consumer is shared
 * with the network thread and never after, so every file reads its
 * fields directly, with or without c->lock: the one piece of the
 * consumer other files may read field by field.
 */
#ifndef KN_CONSUMER_SETTINGS_H
#define KN_CONSUMER_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "consumer/drain.h"
#include "consumer/position.h"
#include "kafka_native.h"

typedef struct knc_config {
    int max_poll_records;
    int fetch_max_wait_ms;
    int fetch_min_bytes;
    int fetch_max_bytes;
    int max_partition_fetch_bytes;
    int retry_backoff_ms;
    int metadata_max_age_ms; /* how long a preferred read replica holds (KIP-392) */
    int request_timeout_ms;
    int default_api_timeout_ms;
    knc_reset reset;
    int64_t reset_duration_ms; /* KNC_RESET_BY_DURATION */
    bool read_committed;
    char *rack; /* client.rack, owned; NULL when unset */
    knc_drain_opts drain_opts;
    char *group_id; /* group.id, owned; NULL without one */
    bool auto_commit;            /* enable.auto.commit (with a group.id) */
    int auto_commit_interval_ms; /* auto.commit.interval.ms */
} knc_config;

/* Reads the settings of a finalized consumer conf into *cfg (zeroed by
 * the caller). Returns 0, KN_ERR__CONFIG (errstr names the key and the
 * accepted values) or KN_ERR__NOMEM; on error the caller still calls
 * knc_config_free. */
int knc_config_read(knc_config *cfg, const kn_conf *conf, char *errstr, size_t n);
/* Frees what knc_config_read allocated (rack, group_id). */
void knc_config_free(knc_config *cfg);

#endif
