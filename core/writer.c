/*
 * writer.c: growth and ownership of kn_wr buffers (see writer.h).
 */
#include "writer.h"

#include "kn_alloc.h"

#define KN_WR_DEFAULT_MAX ((size_t)1 << 30)

void kn_wr_init(kn_wr *w, size_t initial, size_t max) {
    w->buf = NULL;
    w->len = 0;
    w->cap = 0;
    w->max = max ? max : KN_WR_DEFAULT_MAX;
    w->err = 0;
    w->splices = NULL;
    if (initial)
        kn_wr_grow(w, initial);
}

void kn_wr_free(kn_wr *w) {
    kn_free(w->buf);
    w->buf = NULL;
    w->len = w->cap = 0;
}

uint8_t *kn_wr_detach(kn_wr *w, size_t *len) {
    uint8_t *b = w->buf;
    if (len)
        *len = w->len;
    w->buf = NULL;
    w->len = w->cap = 0;
    return b;
}

bool kn_wr_grow_slow(kn_wr *w, size_t n) {
    if (w->err)
        return false;
    if (n > w->max - w->len) {
        w->err = KN_ERR__INVALID_ARG;
        return false;
    }
    size_t need = w->len + n;
    if (need <= w->cap)
        return true;
    size_t cap = w->cap ? w->cap : 256;
    while (cap < need)
        cap = cap > w->max / 2 ? w->max : cap * 2;
    uint8_t *nb = kn_realloc(w->buf, cap);
    if (!nb) {
        w->err = KN_ERR__NOMEM;
        return false;
    }
    w->buf = nb;
    w->cap = cap;
    return true;
}

void kn_wr_splice_add(kn_wr *w, const void *p, size_t n) {
    kn_wr_splices *sp = w->splices;
    if (w->err)
        return;
    if (sp->count == sp->cap) {
        int32_t cap = sp->cap ? sp->cap * 2 : 8;
        kn_wr_splice *items = kn_realloc(sp->items, (size_t)cap * sizeof *items);
        if (!items) {
            w->err = KN_ERR__NOMEM;
            return;
        }
        sp->items = items;
        sp->cap = cap;
    }
    sp->items[sp->count++] = (kn_wr_splice){w->len, (const uint8_t *)p, n};
    sp->bytes += n;
}
