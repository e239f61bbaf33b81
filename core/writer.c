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

bool kn_wr_grow(kn_wr *w, size_t n) {
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
