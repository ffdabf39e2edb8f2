/* rru/access.c: the slow path of guest data accesses: translation and
 * permission checks, accesses that straddle pages, TLB refills, coherence
 * (through machine.c) and invalidation of decoded code on stores. */
#include "rru/internal.h"

static void tlb_fill(rru_hart *h, rru_page *p)
{
    rru_tlb *e = &h->tlb[(p->addr >> RRU_PAGE_SHIFT) & (RRU_TLB_N - 1)];
    e->page = p;
    e->host = p->data;
    e->rtag = (p->prot & RRU_PROT_R) ? p->addr : ~0ull;
    e->wtag = ((p->prot & RRU_PROT_W) && !atomic_load_explicit(&p->code, memory_order_relaxed))
                  ? p->addr : ~0ull;
}

/* The host address of an access of SIZE bytes at A that stays on one line
 * of a page the TLB entry allows, once coherence and the hooks have seen
 * it; NULL if the access needs the general path. This is what the direct
 * path does, plus coherence (most often a line held since an earlier
 * filter epoch, reported again). The page's descriptor is not touched
 * (rru_coh_miss reads it only for a directory lookup): a write needs no
 * code check, since a page holding code never has a write tag (fetch_page
 * clears this hart's, and the other harts' TLBs are flushed by the tlb
 * generation before they run), and the entry needs no refill. Always
 * inlined: the load and store slow paths are its hot callers. */
static inline __attribute__((always_inline)) uint8_t *
line_access(rru_hart *h, const rru_insn *d, uint64_t a, unsigned size, int write)
{
    const rru_tlb *e = &h->tlb[(a >> RRU_PAGE_SHIFT) & (RRU_TLB_N - 1)];
    if ((write ? e->wtag : e->rtag) != (a & ~(RRU_PAGE_SIZE - 1)) ||
        ((a ^ (a + size - 1)) & ~(uint64_t)(RRU_LINE_SIZE - 1)) != 0)
        return NULL;
    uint8_t *host = e->host + (a & (RRU_PAGE_SIZE - 1));
    if (h->coh) {
        /* The guest data is often not in the host's cache when the line
         * is not in the filter: fetching it now overlaps that miss with
         * the directory's and with the RRU's report (see docs/machine.md,
         * "What makes it fast"). */
        __builtin_prefetch(host);
        const uint64_t t = rru_coh_access(h, d, e->page, a & ~(RRU_LINE_SIZE - 1), write);
        if (h->fkey & RRU_FKEY_TRACED)
            rru_coh_trace(h, d, a, size, write, t);
    }
    return host;
}

int rru_access_slow(rru_hart *h, const rru_insn *d, uint64_t a, unsigned size, int kind,
                    void *buf, uint8_t **amo_ptr)
{
    const int write = kind != RRU_ACC_LOAD;
    const unsigned need = write ? RRU_PROT_W : RRU_PROT_R;   /* W implies R */
    const uint32_t cause = write ? RRU_CAUSE_STORE_FAULT : RRU_CAUSE_LOAD_FAULT;
    const uint64_t last = a + size - 1;
    if (a >= RRU_ADDR_LIMIT || last >= RRU_ADDR_LIMIT || last < a)
        return rru_trap(h, d, cause, a);
    uint8_t *host = line_access(h, d, a, size, write);
    if (host) {
        if (kind == RRU_ACC_AMO)
            *amo_ptr = host;
        else if (write)
            rru_copy_bytes(host, buf, size);
        else
            rru_copy_bytes(buf, host, size);
        return 0;
    }
    /* A TLB entry that allows the access names the page without a walk:
     * the fast path trusts the same entry (its tag holds the page only if
     * the permission does), so the walk could find nothing else. */
    const rru_tlb *e = &h->tlb[(a >> RRU_PAGE_SHIFT) & (RRU_TLB_N - 1)];
    const int tlb_ok = (write ? e->wtag : e->rtag) == (a & ~(RRU_PAGE_SIZE - 1));
    rru_page *p1;
    if (tlb_ok) {
        p1 = e->page;
    } else {
        p1 = rru_mem_page(h->mem, a);
        if (!p1 || (p1->prot & need) != need)
            return rru_trap(h, d, cause, a);
    }
    rru_page *p2 = p1;
    if ((last & ~(RRU_PAGE_SIZE - 1)) != p1->addr) {
        p2 = rru_mem_page(h->mem, last);
        if (!p2 || (p2->prot & need) != need)
            return rru_trap(h, d, cause, last & ~(RRU_PAGE_SIZE - 1));
    }

    const size_t off = a & (RRU_PAGE_SIZE - 1);
    if (h->coh) {
        __builtin_prefetch(p1->data + off);   /* as in line_access */
        uint64_t line1 = a & ~(RRU_LINE_SIZE - 1), line2 = last & ~(RRU_LINE_SIZE - 1);
        uint64_t t = rru_coh_access(h, d, p1, line1, write);
        if (line2 != line1)
            t = rru_coh_access(h, d, (line2 & ~(RRU_PAGE_SIZE - 1)) == p1->addr ? p1 : p2, line2,
                               write);
        if (h->fkey & RRU_FKEY_TRACED)
            rru_coh_trace(h, d, a, size, write, t);
    }

    if (kind == RRU_ACC_AMO) {
        *amo_ptr = p1->data + off;   /* aligned: one page, one line */
    } else if (p2 == p1) {
        if (write)
            rru_copy_bytes(p1->data + off, buf, size);
        else
            rru_copy_bytes(buf, p1->data + off, size);
    } else {
        size_t k = RRU_PAGE_SIZE - off;
        uint8_t *b = buf;
        if (write) {
            memcpy(p1->data + off, b, k);
            memcpy(p2->data, b + k, size - k);
        } else {
            memcpy(b, p1->data + off, k);
            memcpy(b + k, p2->data, size - k);
        }
    }
    if (write) {
        if (atomic_load_explicit(&p1->code, memory_order_relaxed))
            rru_mem_code_written(h->mem, p1);
        if (p2 != p1 && atomic_load_explicit(&p2->code, memory_order_relaxed))
            rru_mem_code_written(h->mem, p2);
    }
    tlb_fill(h, p1);
    return 0;
}

/* The register write of load D: V as D's op says (width, sign extension,
 * FP with NaN-boxing). */
static inline void load_result(rru_hart *h, const rru_insn *d, uint64_t v, unsigned size,
                               int sign, int fp)
{
    if (sign) {
        const unsigned sh = 64 - 8 * size;
        v = (uint64_t)((int64_t)(v << sh) >> sh);
    }
    if (fp)
        h->ctx.f[d->rd] = size == 4 ? 0xffffffff00000000ull | v : v;
    else
        h->ctx.x[d->rd] = v;
}

/* The general path of a load or store that line_access did not take:
 * 0 once done (a load's register written), else a trap status. Out of
 * line and with its own buffer, so that the slow paths below pass the
 * address of no local anywhere: gcc then keeps their rru_next a tail
 * call, where a call would nest the rest of the block chain in their
 * frame (one frame per slow access until the chain returns). */
static __attribute__((noinline)) int load_general(rru_hart *h, const rru_insn *d, uint64_t a,
                                                  unsigned size, int sign, int fp)
{
    uint64_t v = 0;   /* little-endian host, as the guest */
    int s = rru_access_slow(h, d, a, size, RRU_ACC_LOAD, &v, NULL);
    if (s == 0)
        load_result(h, d, v, size, sign, fp);
    return s;
}

static __attribute__((noinline)) int store_general(rru_hart *h, const rru_insn *d, uint64_t a,
                                                   unsigned size, uint64_t v)
{
    return rru_access_slow(h, d, a, size, RRU_ACC_STORE, &v, NULL);
}

/* The size of a plain load or store op, and how a load writes its register. */
int rru_load_slow(rru_hart *h, const rru_insn *d, uint64_t a)
{
    unsigned size = 8;
    int sign = 0, fp = 0;
    switch (d->op) {
    case RRU_OP_lb: size = 1; sign = 1; break;
    case RRU_OP_lh: size = 2; sign = 1; break;
    case RRU_OP_lw: size = 4; sign = 1; break;
    case RRU_OP_lbu: size = 1; break;
    case RRU_OP_lhu: size = 2; break;
    case RRU_OP_lwu: size = 4; break;
    case RRU_OP_flw: size = 4; fp = 1; break;
    case RRU_OP_fld: fp = 1; break;
    default: break;   /* ld */
    }
    const uint8_t *host = line_access(h, d, a, size, 0);
    if (host) {
        uint64_t v = 0;   /* little-endian host, as the guest */
        rru_copy_bytes(&v, host, size);
        load_result(h, d, v, size, sign, fp);
    } else {
        int s = load_general(h, d, a, size, sign, fp);
        if (s)
            return s;
    }
    return rru_next(h, d);
}

int rru_store_slow(rru_hart *h, const rru_insn *d, uint64_t a, uint64_t v)
{
    unsigned size = 8;
    switch (d->op) {
    case RRU_OP_sb: size = 1; break;
    case RRU_OP_sh: size = 2; break;
    case RRU_OP_sw: case RRU_OP_fsw: size = 4; break;
    default: break;   /* sd, fsd */
    }
    uint8_t *host = line_access(h, d, a, size, 1);
    if (host) {
        rru_copy_bytes(host, &v, size);   /* low bytes first */
    } else {
        int s = store_general(h, d, a, size, v);
        if (s)
            return s;
    }
    return rru_next(h, d);
}
