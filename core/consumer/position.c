/*
 * position.c: the per-partition position state machine and the Fetch
 * error policy table.
 *
 *   NEED_COMMITTED --OffsetFetch: offset--> VALID
 *   NEED_COMMITTED --OffsetFetch: none committed--> NEED_RESET
 *   NEED_RESET --ListOffsets sent--> RESETTING --answer--> VALID
 *   NEED_RESET (strategy none) --> FAILED (KN_ERR__NO_OFFSET)
 *   VALID --seek--> VALID (buffered data dropped, read-ahead too)
 *   VALID --OFFSET_OUT_OF_RANGE / seek_to_*--> NEED_RESET
 *   any --bad batch, fatal partition error--> FAILED --seek--> VALID
 *
 * Every transition that moves the position for a reason other than
 * delivering records bumps gen, so a Fetch or ListOffsets answer that
 * was requested for the old position is recognised and dropped.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "consumer/position.h"
#include "kn_alloc.h"

knc_part *knc_part_new(const char *topic, int32_t partition, uint64_t id, knc_reset reset,
                       bool use_committed) {
    knc_part *p = kn_calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    if (!(p->topic = kn_strdup(topic))) {
        kn_free(p);
        return NULL;
    }
    p->partition = partition;
    p->id = id;
    p->position = -1;
    p->position_epoch = -1;
    p->high_watermark = -1;
    p->last_stable_offset = -1;
    p->checked_leader_epoch = -1;
    p->read_replica = -1;
    knc_part_reset(p, reset);
    if (use_committed && p->state == KNC_POS_FAILED) {
        p->err_pending = false;
        p->err = 0;
    }
    if (use_committed)
        p->state = KNC_POS_NEED_COMMITTED;
    return p;
}

bool knc_part_committed_done(knc_part *p, uint32_t gen, int64_t offset, int32_t leader_epoch) {
    if (p->state != KNC_POS_NEED_COMMITTED || p->gen != gen)
        return false;
    p->reset_inflight = false;
    if (offset >= 0)
        knc_part_seek(p, offset, leader_epoch);
    else
        knc_part_reset(p, p->reset);
    return true;
}

void knc_part_free(knc_part *p) {
    if (!p)
        return;
    knc_fetched_free(p->fetched);
    knc_fetched_free(p->ahead);
    kn_free(p->topic);
    kn_free(p);
}

/* Drops both buffered slices (the read-ahead one too) and bumps gen so
 * a Fetch still in flight for them is dropped when it answers.
 *
 * The bump also orphans a ListOffsets, OffsetFetch or
 * OffsetForLeaderEpoch still in flight: its answer matches the old gen,
 * so it is dropped without touching p, in flight marks included. The
 * marks therefore go here: left set, they would stop the lookup the new
 * state needs from ever being sent (a seek to the beginning landing
 * while assign's default reset was in flight left p in NEED_RESET with
 * reset_inflight set for good: no position, no records). */
static void knc_part_drop_buffered(knc_part *p) {
    knc_fetched_free(p->fetched);
    p->fetched = NULL;
    knc_fetched_free(p->ahead);
    p->ahead = NULL;
    p->gen++;
    p->reset_inflight = false;
    p->validate_inflight = false;
}

void knc_part_seek(knc_part *p, int64_t offset, int32_t leader_epoch) {
    knc_part_drop_buffered(p);
    p->needs_validation = false;
    p->state = KNC_POS_VALID;
    p->position = offset;
    p->position_epoch = leader_epoch;
    p->err_pending = false;
    p->err = 0;
    p->retry_at_ms = 0;
}

void knc_part_reset(knc_part *p, knc_reset strategy) {
    knc_part_drop_buffered(p);
    p->needs_validation = false;
    p->err_pending = false;
    p->err = 0;
    p->reset = strategy;
    p->reset_fallback = false;
    p->position = -1;
    p->position_epoch = -1;
    p->retry_at_ms = 0;
    if (strategy == KNC_RESET_NONE) {
        knc_part_fail(p, KN_ERR__NO_OFFSET,
                      "no offset for %s [%d]: no committed offset and auto.offset.reset=none",
                      p->topic, (int)p->partition);
        return;
    }
    p->state = KNC_POS_NEED_RESET;
}

bool knc_part_reset_done(knc_part *p, uint32_t gen, int64_t offset, int32_t leader_epoch) {
    if (p->state != KNC_POS_RESETTING || p->gen != gen)
        return false;
    p->state = KNC_POS_VALID;
    p->position = offset;
    p->position_epoch = leader_epoch;
    return true;
}

void knc_part_fail(knc_part *p, int err, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->errstr, sizeof(p->errstr), fmt, ap);
    va_end(ap);
    p->state = KNC_POS_FAILED;
    p->err = err;
    p->err_pending = true;
}

bool knc_part_leader_epoch_seen(knc_part *p, int32_t md_epoch) {
    if (md_epoch < 0 || p->state != KNC_POS_VALID || p->needs_validation)
        return false;
    if (p->checked_leader_epoch >= 0 && md_epoch > p->checked_leader_epoch &&
        p->position_epoch >= 0) {
        /* Buffered records (read-ahead ones above all) came from the old
         * leader and may lie past the divergence point: drop them, as
         * Java drops fetched data of a partition awaiting validation.
         * The position is exact, so they are fetched again if valid. */
        knc_part_drop_buffered(p);
        p->needs_validation = true;
        return true;
    }
    if (md_epoch > p->checked_leader_epoch)
        p->checked_leader_epoch = md_epoch;
    return false;
}

bool knc_part_validated(knc_part *p, uint32_t gen, int32_t md_epoch, int64_t end_offset,
                        int32_t end_epoch) {
    if (p->gen != gen || p->state != KNC_POS_VALID || !p->needs_validation)
        return false;
    p->validate_inflight = false;
    if (end_offset < 0 || end_epoch < 0) {
        /* The leader knows nothing at or below the position's epoch. */
        knc_part_reset(p, p->reset);
        return true;
    }
    if (end_offset < p->position) {
        if (p->reset == KNC_RESET_NONE) {
            knc_part_fail(p, KN_ERR_OFFSET_OUT_OF_RANGE,
                          "%s [%d]: log truncation detected: position %lld (epoch %d) is past the "
                          "leader's end offset %lld for epoch %d",
                          p->topic, (int)p->partition, (long long)p->position,
                          (int)p->position_epoch, (long long)end_offset, (int)end_epoch);
            p->needs_validation = false;
            return true;
        }
        knc_part_seek(p, end_offset, end_epoch);
    }
    p->needs_validation = false;
    p->checked_leader_epoch = md_epoch;
    return true;
}

int knc_parse_duration_ms(const char *iso, int64_t *ms) {
    /* Units in the order ISO-8601 allows them, with their ms. */
    static const struct {
        char unit;
        bool in_time;
        int64_t ms;
    } units[] = {{'D', false, 86400000}, {'H', true, 3600000}, {'M', true, 60000}, {'S', true, 1000}};
    const char *s = iso;
    int64_t total = 0;
    size_t next_unit = 0;
    bool in_time = false, any = false;
    if (*s == '+')
        s++;
    if (*s != 'P' && *s != 'p')
        return KN_ERR__CONFIG;
    s++;
    while (*s) {
        if ((*s == 'T' || *s == 't') && !in_time) {
            in_time = true;
            s++;
            if (!*s)
                return KN_ERR__CONFIG;
            continue;
        }
        int64_t whole = 0, frac_ms = 0;
        const char *start = s;
        for (; *s >= '0' && *s <= '9'; s++) {
            if (whole > (INT64_MAX - 9) / 10)
                return KN_ERR__CONFIG;
            whole = whole * 10 + (*s - '0');
        }
        bool frac = false;
        if (*s == '.' || *s == ',') {
            /* fractions only on seconds; below a millisecond is dropped */
            frac = true;
            s++;
            int64_t scale = 100;
            for (; *s >= '0' && *s <= '9'; s++, scale /= 10)
                frac_ms += (*s - '0') * scale;
        }
        if (s == start || !*s)
            return KN_ERR__CONFIG;
        char u = (char)(*s >= 'a' && *s <= 'z' ? *s - 32 : *s);
        size_t k = next_unit;
        while (k < 4 && units[k].unit != u)
            k++;
        if (k == 4 || units[k].in_time != in_time || (frac && u != 'S'))
            return KN_ERR__CONFIG;
        if (whole > (INT64_MAX - total) / units[k].ms - 1)
            return KN_ERR__CONFIG;
        total += whole * units[k].ms + frac_ms;
        next_unit = k + 1;
        any = true;
        s++;
    }
    if (!any)
        return KN_ERR__CONFIG;
    *ms = total;
    return 0;
}

knc_action knc_fetch_error_action(int16_t error_code) {
    /* Mirrors the Java client's per-partition handling in its fetch
     * collector: leadership and metadata problems heal after a refresh;
     * an invalid position is reset; everything else is the
     * application's to see. */
    static const struct {
        int16_t code;
        knc_action action;
    } table[] = {
        {0, KNC_ACT_OK},
        {KN_ERR_OFFSET_OUT_OF_RANGE, KNC_ACT_RESET},
        {KN_ERR_NOT_LEADER_OR_FOLLOWER, KNC_ACT_REFRESH_METADATA},
        {KN_ERR_REPLICA_NOT_AVAILABLE, KNC_ACT_REFRESH_METADATA},
        {KN_ERR_KAFKA_STORAGE_ERROR, KNC_ACT_REFRESH_METADATA},
        {KN_ERR_FENCED_LEADER_EPOCH, KNC_ACT_REFRESH_METADATA},
        {KN_ERR_OFFSET_NOT_AVAILABLE, KNC_ACT_REFRESH_METADATA},
        {KN_ERR_UNKNOWN_TOPIC_OR_PARTITION, KNC_ACT_REFRESH_METADATA},
        {KN_ERR_UNKNOWN_TOPIC_ID, KNC_ACT_REFRESH_METADATA},
        {KN_ERR_INCONSISTENT_TOPIC_ID, KNC_ACT_REFRESH_METADATA},
        {KN_ERR_UNKNOWN_LEADER_EPOCH, KNC_ACT_RETRY},
        {KN_ERR_UNKNOWN_SERVER_ERROR, KNC_ACT_RETRY},
    };
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
        if (table[i].code == error_code)
            return table[i].action;
    return KNC_ACT_FAIL;
}

size_t knc_part_buffered_bytes(const knc_part *p) {
    size_t n = 0;
    if (p->fetched)
        n += p->fetched->len - p->fetched->it.off;
    if (p->ahead)
        n += p->ahead->len;
    return n;
}
