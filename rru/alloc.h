/* rru/alloc.h: allocation that cannot fail, for rru/ and the layers above
 * (out of memory is reported on stderr and aborts, like the formats
 * library does). */
#ifndef RNR_RRU_ALLOC_H
#define RNR_RRU_ALLOC_H

#include <stdio.h>
#include <stdlib.h>

static inline void *xoom(void *p)
{
    if (!p) {
        fputs("rnr: out of memory\n", stderr);
        abort();
    }
    return p;
}

static inline void *xmalloc(size_t n) { return xoom(malloc(n ? n : 1)); }
static inline void *xcalloc(size_t n, size_t size) { return xoom(calloc(n ? n : 1, size ? size : 1)); }
static inline void *xrealloc(void *p, size_t n) { return xoom(realloc(p, n ? n : 1)); }

#endif
