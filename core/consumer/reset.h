/*
 * reset.h: ListOffsets for positions (reset.c): partitions without a
 * position (auto.offset.reset, seek_to_beginning/end) get one
 * ListOffsets per leader; the answer positions them.
 */
#ifndef KN_CONSUMER_RESET_H
#define KN_CONSUMER_RESET_H

#include "consumer/consumer_int.h"
#include "consumer/request.h"

/* Fills req's ListOffsets body. 0 or KN_ERR__NOMEM. */
int knc_fill_list_offsets(const knc_config *cfg, knc_req *req);
/* Sends it (no lock held); the answer completes through the callback,
 * which frees req. */
void knc_reset_send(knw_client *client, knc_req *req);

#endif
