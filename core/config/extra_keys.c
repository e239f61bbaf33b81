/*
 * extra_keys.c: configuration keys of this library that Java's catalog
 * does not have (hand-written; same shape as catalog_generated.c, see
 * catalog.h). Each entry must be a setting some module really reads:
 * an accepted key that does nothing would be a fake "supported".
 *
 * None is needed yet. Add entries here, named "kn.<area>.<name>" so they
 * can never collide with a future Kafka key; tests/c/test_config_extra.c
 * proves the mechanism with its own table.
 *
 * This file holds only these two definitions on purpose: a test may
 * link its own kn_conf_extra_keys/kn_conf_extra_count instead (the
 * static library then leaves this object out).
 */
#include "config/catalog.h"

/* C forbids an empty array; the count, not the array length, is what
 * the lookup reads. */
const kn_conf_key kn_conf_extra_keys[] = {{.name = NULL}};
const size_t kn_conf_extra_count = 0;
