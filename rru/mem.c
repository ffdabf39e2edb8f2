/* rru/mem.c: guest memory: a three-level radix tree of 4 KiB pages (48-bit
 * addresses), permissions, host access, generations for executors' caches,
 * and the digest. Unmapped pages go to a free list and are reused, never
 * returned to the host before rru_mem_free, so a stale translation in an
 * executor can never touch freed host memory. Page data is allocated in
 * slabs. */
#include "rru/mem.h"

#include <stdlib.h>
#include <string.h>

#include "formats/digest.h"
#include "rru/internal.h"

#define LEVEL_BITS 12u
#define LEVEL_N (1u << LEVEL_BITS)

/* Tree pointers are atomics: rru_mem_populate adds pages while executors
 * look pages up (acquire loads see a fully built node or page). */
typedef struct leaf { _Atomic(rru_page *) pages[LEVEL_N]; } leaf;
typedef struct mid { _Atomic(leaf *) leaves[LEVEL_N]; } mid;

#define LOAD(x) atomic_load_explicit(&(x), memory_order_acquire)
#define STORE(x, v) atomic_store_explicit(&(x), (v), memory_order_release)

/* Page data comes from slabs of SLAB_PAGES pages: one page-aligned
 * allocation per page costs the host two pages (the allocator pads each to
 * its alignment). A slab's pages not handed out yet are never written, so
 * they cost nothing resident. */
#define SLAB_PAGES 64u

typedef struct slab {
    struct slab *next;
    uint8_t *data;             /* SLAB_PAGES pages, page aligned */
} slab;

struct rru_mem {
    _Atomic(mid *) top[LEVEL_N];
    uint64_t npages;
    rru_page *free_pages;
    rru_page *retired;         /* pages let go whose data another memory may hold */
    slab *slabs;               /* every slab, the current one first */
    unsigned slab_used;        /* pages of the current slab handed out */
    _Atomic uint64_t tlb_gen;
    _Atomic uint64_t code_gen;
};

static unsigned idx1(uint64_t a) { return (unsigned)(a >> 36) & (LEVEL_N - 1); }
static unsigned idx2(uint64_t a) { return (unsigned)(a >> 24) & (LEVEL_N - 1); }
static unsigned idx3(uint64_t a) { return (unsigned)(a >> 12) & (LEVEL_N - 1); }

rru_mem *rru_mem_new(void) { return calloc(1, sizeof(rru_mem)); }

void rru_mem_free(rru_mem *m)
{
    if (!m)
        return;
    for (unsigned i = 0; i < LEVEL_N; i++) {
        mid *md = LOAD(m->top[i]);
        if (!md)
            continue;
        for (unsigned j = 0; j < LEVEL_N; j++) {
            leaf *lf = LOAD(md->leaves[j]);
            if (!lf)
                continue;
            for (unsigned k = 0; k < LEVEL_N; k++) {
                rru_page *p = LOAD(lf->pages[k]);
                free(p);
            }
            free(lf);
        }
        free(md);
    }
    while (m->free_pages) {
        rru_page *p = m->free_pages;
        m->free_pages = p->free_next;
        free(p);
    }
    while (m->retired) {
        rru_page *p = m->retired;
        m->retired = p->free_next;
        free(p);
    }
    while (m->slabs) {
        slab *s = m->slabs;
        m->slabs = s->next;
        free(s->data);
        free(s);
    }
    free(m);
}

rru_mem *rru_mem_clone(const rru_mem *m)
{
    rru_mem *c = rru_mem_new();
    if (!c)
        return NULL;
    for (uint64_t a = rru_mem_next_mapped(m, 0); a != UINT64_MAX;
         a = rru_mem_next_mapped(m, a + RRU_PAGE_SIZE)) {
        const rru_page *from = rru_mem_page(m, a);
        if (rru_mem_map(c, a, RRU_PAGE_SIZE, from->prot) != 0) {
            rru_mem_free(c);
            return NULL;
        }
        memcpy(rru_mem_page(c, a)->data, from->data, RRU_PAGE_SIZE);
        if (a + RRU_PAGE_SIZE >= RRU_ADDR_LIMIT)
            break;
    }
    return c;
}

rru_page *rru_mem_page(const rru_mem *m, uint64_t addr)
{
    if (addr >= RRU_ADDR_LIMIT)
        return NULL;
    mid *md = LOAD(((rru_mem *)m)->top[idx1(addr)]);
    if (!md)
        return NULL;
    leaf *lf = LOAD(md->leaves[idx2(addr)]);
    return lf ? LOAD(lf->pages[idx3(addr)]) : NULL;
}

/* The slot of ADDR's page, creating tree nodes; NULL if out of memory. */
static _Atomic(rru_page *) *slot(rru_mem *m, uint64_t addr)
{
    _Atomic(mid *) *mp = &m->top[idx1(addr)];
    mid *md = LOAD(*mp);
    if (!md) {
        if (!(md = calloc(1, sizeof(mid))))
            return NULL;
        STORE(*mp, md);
    }
    _Atomic(leaf *) *lp = &md->leaves[idx2(addr)];
    leaf *lf = LOAD(*lp);
    if (!lf) {
        if (!(lf = calloc(1, sizeof(leaf))))
            return NULL;
        STORE(*lp, lf);
    }
    return &lf->pages[idx3(addr)];
}

static _Atomic(rru_page *) *slot_if_any(rru_mem *m, uint64_t addr)
{
    mid *md = LOAD(m->top[idx1(addr)]);
    if (!md)
        return NULL;
    leaf *lf = LOAD(md->leaves[idx2(addr)]);
    return lf ? &lf->pages[idx3(addr)] : NULL;
}

static int range_ok(uint64_t addr, uint64_t len)
{
    return len > 0 && (addr & (RRU_PAGE_SIZE - 1)) == 0 && (len & (RRU_PAGE_SIZE - 1)) == 0 &&
           addr < RRU_ADDR_LIMIT && len <= RRU_ADDR_LIMIT - addr;
}

static unsigned norm_prot(unsigned prot)
{
    prot &= RRU_PROT_R | RRU_PROT_W | RRU_PROT_X;
    if (prot & RRU_PROT_W)
        prot |= RRU_PROT_R;
    return prot;
}

static void bump_tlb(rru_mem *m) { atomic_fetch_add_explicit(&m->tlb_gen, 1, memory_order_release); }
static void bump_code(rru_mem *m) { atomic_fetch_add_explicit(&m->code_gen, 1, memory_order_release); }

static void release_page(rru_mem *m, rru_page *p)
{
    /* A shared page's data stays as the other memory left it (the page
     * itself stays allocated too: a stale translation may still use it). */
    rru_page **list = p->shared ? &m->retired : &m->free_pages;
    p->free_next = *list;
    *list = p;
    m->npages--;
}

/* The data of a page never used before, from the current slab or a new
 * one. NULL if host memory runs out. */
static uint8_t *slab_page(rru_mem *m)
{
    if (!m->slabs || m->slab_used == SLAB_PAGES) {
        slab *s = malloc(sizeof *s);
        if (!s)
            return NULL;
        if (posix_memalign((void **)&s->data, RRU_PAGE_SIZE, SLAB_PAGES * RRU_PAGE_SIZE) != 0) {
            free(s);
            return NULL;
        }
        s->next = m->slabs;
        m->slabs = s;
        m->slab_used = 0;
    }
    return m->slabs->data + (size_t)m->slab_used++ * RRU_PAGE_SIZE;
}

/* A zeroed page for ADDR with PROT, from the free list or the host; not
 * yet in the tree. NULL if host memory runs out. */
static rru_page *new_page(rru_mem *m, uint64_t a, unsigned prot)
{
    rru_page *p = m->free_pages;
    if (p) {
        m->free_pages = p->free_next;
    } else {
        p = calloc(1, sizeof *p);
        if (!p)
            return NULL;
        if (!(p->data = slab_page(m))) {
            free(p);
            return NULL;
        }
    }
    memset(p->data, 0, RRU_PAGE_SIZE);
    p->addr = a;
    p->prot = (uint8_t)prot;
    p->free_next = NULL;
    p->coh_dir = NULL;
    p->coh_owner = 0;
    atomic_store_explicit(&p->code, 0, memory_order_relaxed);
    m->npages++;
    return p;
}

int rru_mem_map(rru_mem *m, uint64_t addr, uint64_t len, unsigned prot)
{
    if (!range_ok(addr, len))
        return -1;
    prot = norm_prot(prot);
    int replaced = 0;
    for (uint64_t a = addr; a < addr + len; a += RRU_PAGE_SIZE) {
        _Atomic(rru_page *) *s = slot(m, a);
        if (!s)
            return -1;
        rru_page *p = LOAD(*s);
        if (p && p->shared) {
            /* Not into the data another memory shares: a page of its own. */
            replaced = 1;
            if (atomic_load_explicit(&p->code, memory_order_relaxed))
                bump_code(m);
            STORE(*s, (rru_page *)NULL);
            release_page(m, p);
            p = NULL;
        }
        if (p) {
            replaced = 1;
            if (atomic_load_explicit(&p->code, memory_order_relaxed))
                bump_code(m);
            memset(p->data, 0, RRU_PAGE_SIZE);
            p->prot = (uint8_t)prot;
            atomic_store_explicit(&p->code, 0, memory_order_relaxed);
        } else {
            if (!(p = new_page(m, a, prot)))
                return -1;
            STORE(*s, p);
        }
    }
    if (replaced)
        bump_tlb(m);
    return 0;
}

int rru_mem_populate(rru_mem *m, uint64_t addr, uint64_t len, unsigned prot)
{
    if (!range_ok(addr, len))
        return -1;
    prot = norm_prot(prot);
    for (uint64_t a = addr; a < addr + len; a += RRU_PAGE_SIZE) {
        _Atomic(rru_page *) *s = slot(m, a);
        if (!s)
            return -1;
        if (LOAD(*s))
            continue;
        rru_page *p = new_page(m, a, prot);
        if (!p)
            return -1;
        STORE(*s, p);   /* published whole: a concurrent lookup sees it or nothing */
    }
    return 0;
}

int rru_mem_unmap(rru_mem *m, uint64_t addr, uint64_t len)
{
    if (!range_ok(addr, len))
        return -1;
    int any = 0;
    for (uint64_t a = addr; a < addr + len; a += RRU_PAGE_SIZE) {
        _Atomic(rru_page *) *s = slot_if_any(m, a);
        if (!s || !LOAD(*s)) {
            /* Skip the rest of an absent leaf quickly. */
            if (!s) {
                uint64_t next = (a | ((1ull << 24) - 1)) + 1;
                if (next > a + RRU_PAGE_SIZE)
                    a = next - RRU_PAGE_SIZE;
            }
            continue;
        }
        rru_page *p = LOAD(*s);
        if (atomic_load_explicit(&p->code, memory_order_relaxed))
            bump_code(m);
        STORE(*s, (rru_page *)NULL);
        release_page(m, p);
        any = 1;
    }
    if (any)
        bump_tlb(m);
    return 0;
}

int rru_mem_share(rru_mem *dst, rru_mem *src, uint64_t addr, uint64_t len)
{
    if (!range_ok(addr, len))
        return -1;
    int replaced = 0;
    for (uint64_t a = addr; a < addr + len; a += RRU_PAGE_SIZE) {
        rru_page *sp = rru_mem_page(src, a);
        if (!sp)
            continue;
        _Atomic(rru_page *) *s = slot(dst, a);
        rru_page *p = s ? calloc(1, sizeof *p) : NULL;
        if (!p)
            return -1;
        rru_page *old = LOAD(*s);
        if (old) {
            if (atomic_load_explicit(&old->code, memory_order_relaxed))
                bump_code(dst);
            STORE(*s, (rru_page *)NULL);
            release_page(dst, old);
            replaced = 1;
        }
        p->data = sp->data;
        p->addr = a;
        p->prot = sp->prot;
        p->shared = 1;
        sp->shared = 1;
        dst->npages++;
        STORE(*s, p);
    }
    if (replaced)
        bump_tlb(dst);
    return 0;
}

int rru_mem_shares(const rru_mem *a, const rru_mem *b, uint64_t addr)
{
    const rru_page *pa = rru_mem_page(a, addr), *pb = rru_mem_page(b, addr);
    return pa && pb && pa->data == pb->data;
}

int rru_mem_protect(rru_mem *m, uint64_t addr, uint64_t len, unsigned prot)
{
    if (!range_ok(addr, len))
        return -1;
    for (uint64_t a = addr; a < addr + len; a += RRU_PAGE_SIZE)
        if (!rru_mem_page(m, a))
            return -1;
    prot = norm_prot(prot);
    for (uint64_t a = addr; a < addr + len; a += RRU_PAGE_SIZE) {
        rru_page *p = rru_mem_page(m, a);
        if (atomic_load_explicit(&p->code, memory_order_relaxed) && !(prot & RRU_PROT_X))
            bump_code(m);
        p->prot = (uint8_t)prot;
    }
    bump_tlb(m);
    return 0;
}

int rru_mem_prot(const rru_mem *m, uint64_t addr)
{
    const rru_page *p = rru_mem_page(m, addr);
    return p ? p->prot : -1;
}

int rru_mem_range_free(const rru_mem *m, uint64_t addr, uint64_t len)
{
    if (addr >= RRU_ADDR_LIMIT || len > RRU_ADDR_LIMIT - addr)
        return 0;
    if (len == 0)
        return 1;
    uint64_t first = addr & ~(RRU_PAGE_SIZE - 1);
    uint64_t next = rru_mem_next_mapped(m, first);
    return next >= addr + len;
}

uint64_t rru_mem_next_mapped(const rru_mem *m, uint64_t addr)
{
    if (addr >= RRU_ADDR_LIMIT)
        return UINT64_MAX;
    addr = (addr + RRU_PAGE_SIZE - 1) & ~(RRU_PAGE_SIZE - 1);
    while (addr < RRU_ADDR_LIMIT) {
        mid *md = LOAD(((rru_mem *)m)->top[idx1(addr)]);
        if (!md) {
            addr = (addr | ((1ull << 36) - 1)) + 1;
            continue;
        }
        leaf *lf = LOAD(md->leaves[idx2(addr)]);
        if (!lf) {
            addr = (addr | ((1ull << 24) - 1)) + 1;
            continue;
        }
        for (unsigned k = idx3(addr); k < LEVEL_N; k++)
            if (LOAD(lf->pages[k]))
                return (addr & ~((1ull << 24) - 1)) | ((uint64_t)k << RRU_PAGE_SHIFT);
        addr = (addr | ((1ull << 24) - 1)) + 1;
    }
    return UINT64_MAX;
}

uint64_t rru_mem_pages(const rru_mem *m) { return m->npages; }

int rru_mem_read(const rru_mem *m, uint64_t addr, void *buf, size_t n)
{
    /* Check first, so that nothing is copied on failure. */
    if (n == 0)
        return 0;
    if (addr >= RRU_ADDR_LIMIT || n > RRU_ADDR_LIMIT - addr)
        return -1;
    for (uint64_t a = addr & ~(RRU_PAGE_SIZE - 1); a < addr + n; a += RRU_PAGE_SIZE)
        if (!rru_mem_page(m, a))
            return -1;
    uint8_t *out = buf;
    while (n) {
        const rru_page *p = rru_mem_page(m, addr);
        size_t off = addr & (RRU_PAGE_SIZE - 1), k = RRU_PAGE_SIZE - off;
        if (k > n)
            k = n;
        memcpy(out, p->data + off, k);
        out += k;
        addr += k;
        n -= k;
    }
    return 0;
}

int rru_mem_write(rru_mem *m, uint64_t addr, const void *buf, size_t n)
{
    const uint8_t *in = buf;
    while (n) {
        rru_page *p = rru_mem_page(m, addr);
        if (!p)
            return -1;
        size_t off = addr & (RRU_PAGE_SIZE - 1), k = RRU_PAGE_SIZE - off;
        if (k > n)
            k = n;
        memcpy(p->data + off, in, k);
        if (atomic_load_explicit(&p->code, memory_order_relaxed))
            bump_code(m);
        in += k;
        addr += k;
        n -= k;
    }
    return 0;
}

long rru_mem_read_str(const rru_mem *m, uint64_t addr, char *buf, size_t max)
{
    for (size_t i = 0; i < max; i++) {
        const rru_page *p = rru_mem_page(m, addr + i);
        if (!p)
            return -1;
        char c = (char)p->data[(addr + i) & (RRU_PAGE_SIZE - 1)];
        buf[i] = c;
        if (c == '\0')
            return (long)i;
    }
    return -1;
}

void rru_mem_invalidate_code(rru_mem *m, uint64_t addr, uint64_t len)
{
    (void)addr;
    (void)len;
    bump_code(m);
}

void rru_mem_code_written(rru_mem *m, rru_page *p)
{
    (void)p;
    bump_code(m);
}

void rru_mem_mark_code(rru_mem *m, rru_page *p)
{
    if (atomic_exchange_explicit(&p->code, 1, memory_order_relaxed) == 0 && (p->prot & RRU_PROT_W))
        bump_tlb(m);   /* executors must stop writing it through their TLBs */
}

uint64_t rru_mem_tlb_gen(const rru_mem *m)
{
    return atomic_load_explicit(&m->tlb_gen, memory_order_acquire);
}

uint64_t rru_mem_code_gen(const rru_mem *m)
{
    return atomic_load_explicit(&m->code_gen, memory_order_acquire);
}

void rru_mem_digest(const rru_mem *m, uint8_t out[32])
{
    rnr_sha256 s;
    rnr_sha256_init(&s);
    for (uint64_t a = rru_mem_next_mapped(m, 0); a != UINT64_MAX;
         a = rru_mem_next_mapped(m, a + RRU_PAGE_SIZE)) {
        const rru_page *p = rru_mem_page(m, a);
        uint8_t head[9];
        for (int i = 0; i < 8; i++)
            head[i] = (uint8_t)(a >> (8 * i));
        head[8] = p->prot;
        rnr_sha256_update(&s, head, sizeof head);
        rnr_sha256_update(&s, p->data, RRU_PAGE_SIZE);
        if (a + RRU_PAGE_SIZE >= RRU_ADDR_LIMIT)
            break;
    }
    rnr_sha256_final(&s, out);
}
