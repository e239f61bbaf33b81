/*
 * settings.c: reads a consumer's settings from its kn_conf once, at
 * creation (settings.h), so the hot paths never look a key up.
 */
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "consumer/settings.h"
#include "error.h"
#include "kn_alloc.h"

static int knc_int(const kn_conf *conf, const char *key) {
    int64_t v = kn_conf_get_int(conf, key);
    return v > 0x7fffffff ? 0x7fffffff : v < 0 ? 0 : (int)v;
}

int knc_config_read(knc_config *cfg, const kn_conf *conf, char *errstr, size_t n) {
    cfg->max_poll_records = knc_int(conf, "max.poll.records");
    cfg->fetch_max_wait_ms = knc_int(conf, "fetch.max.wait.ms");
    cfg->fetch_min_bytes = knc_int(conf, "fetch.min.bytes");
    cfg->fetch_max_bytes = knc_int(conf, "fetch.max.bytes");
    cfg->max_partition_fetch_bytes = knc_int(conf, "max.partition.fetch.bytes");
    cfg->retry_backoff_ms = knc_int(conf, "retry.backoff.ms");
    cfg->metadata_max_age_ms = knc_int(conf, "metadata.max.age.ms");
    cfg->request_timeout_ms = knc_int(conf, "request.timeout.ms");
    cfg->default_api_timeout_ms = knc_int(conf, "default.api.timeout.ms");
    if (cfg->max_poll_records < 1)
        cfg->max_poll_records = 1;
    const char *reset = kn_conf_get_str(conf, "auto.offset.reset");
    if (!reset || strcmp(reset, "latest") == 0) {
        cfg->reset = KNC_RESET_LATEST;
    } else if (strcmp(reset, "earliest") == 0) {
        cfg->reset = KNC_RESET_EARLIEST;
    } else if (strcmp(reset, "none") == 0) {
        cfg->reset = KNC_RESET_NONE;
    } else if (strncmp(reset, "by_duration:", 12) == 0 &&
               knc_parse_duration_ms(reset + 12, &cfg->reset_duration_ms) == 0) {
        cfg->reset = KNC_RESET_BY_DURATION;
    } else {
        kn_errstr_set(errstr, n, "invalid value \"%s\" for auto.offset.reset: expected latest, "
                      "earliest, none or by_duration:<ISO-8601 duration, e.g. PT1H>", reset);
        return KN_ERR__CONFIG;
    }
    const char *iso = kn_conf_get_str(conf, "isolation.level");
    cfg->read_committed = iso && strcmp(iso, "read_committed") == 0;
    const char *rack = kn_conf_get_str(conf, "client.rack");
    if (rack && *rack && !(cfg->rack = kn_strdup(rack)))
        return KN_ERR__NOMEM;
    cfg->drain_opts.verify_crc = kn_conf_get_bool(conf, "check.crcs") != 0;
    cfg->drain_opts.read_committed = cfg->read_committed;
    /* One decompressed batch can never need more than a whole fetch;
     * the floor covers a single oversized record. */
    size_t cap = (size_t)cfg->fetch_max_bytes * 2;
    cfg->drain_opts.scratch_max = cap < ((size_t)64 << 20) ? ((size_t)64 << 20) : cap;
    const char *group = kn_conf_get_str(conf, "group.id");
    if (group && *group) {
        if (!(cfg->group_id = kn_strdup(group)))
            return KN_ERR__NOMEM;
        cfg->auto_commit = kn_conf_get_bool(conf, "enable.auto.commit") != 0;
        cfg->auto_commit_interval_ms = knc_int(conf, "auto.commit.interval.ms");
    }
    return KN_OK;
}

void knc_config_free(knc_config *cfg) {
    kn_free(cfg->rack);
    kn_free(cfg->group_id);
    cfg->rack = NULL;
    cfg->group_id = NULL;
}
