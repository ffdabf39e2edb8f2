/* backend/heap.h: the binary min-heap the backend's streams share (the
 * oracle's chunks by time, verify's requirements by destination, the
 * metrics' events by time), written once as a macro over the element type
 * T and its strict order LESS(const T *, const T *). HEAP_DEFINE(NAME, T,
 * LESS) makes the type NAME (e, n, cap; zero-initialized is empty; free e)
 * and NAME_push(NAME *, T), NAME_pop(NAME *) -> the least element (the heap
 * must not be empty); e[0] is the least while n > 0. Out of memory aborts. */
#ifndef RNR_BACKEND_HEAP_H
#define RNR_BACKEND_HEAP_H

#include <stdint.h>

#include "rru/alloc.h"

#define HEAP_DEFINE(NAME, T, LESS)                                              \
    typedef struct NAME {                                                       \
        T *e;                                                                   \
        uint64_t n, cap;                                                        \
    } NAME;                                                                     \
    static inline void NAME##_push(NAME *h, T x)                                \
    {                                                                           \
        if (h->n == h->cap) {                                                   \
            h->cap = h->cap ? 2 * h->cap : 64;                                  \
            h->e = xrealloc(h->e, h->cap * sizeof *h->e);                       \
        }                                                                       \
        uint64_t i = h->n++;                                                    \
        while (i && LESS(&x, &h->e[(i - 1) / 2])) {                             \
            h->e[i] = h->e[(i - 1) / 2];                                        \
            i = (i - 1) / 2;                                                    \
        }                                                                       \
        h->e[i] = x;                                                            \
    }                                                                           \
    static inline T NAME##_pop(NAME *h)                                         \
    {                                                                           \
        T top = h->e[0];                                                        \
        T x = h->e[--h->n];                                                     \
        uint64_t i = 0;                                                         \
        for (;;) {                                                              \
            uint64_t c = 2 * i + 1;                                             \
            if (c >= h->n)                                                      \
                break;                                                          \
            if (c + 1 < h->n && LESS(&h->e[c + 1], &h->e[c]))                   \
                c++;                                                            \
            if (!LESS(&h->e[c], &x))                                            \
                break;                                                          \
            h->e[i] = h->e[c];                                                  \
            i = c;                                                              \
        }                                                                       \
        if (h->n)                                                               \
            h->e[i] = x;                                                        \
        return top;                                                             \
    }

#endif
