/* rru/hart.c: the interpreter loop shared by record and replay: contexts,
 * the per-hart cache of decoded basic blocks (keyed by pc, arena-allocated,
 * dropped as a whole when code may have changed), and "run at most N
 * instructions" with exact counting. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "rru/fastfp.h"
#include "rru/internal.h"

#define ARENA_CHUNK (256u << 10)
#define ARENA_LIMIT_BLOCKS 200000u   /* then everything is decoded afresh */

void rru_ctx_init(rru_ctx *c, uint64_t entry)
{
    memset(c, 0, sizeof *c);
    c->pc = entry;
}

const char *rru_stop_name(rru_stop_reason r)
{
    switch (r) {
    case RRU_STOP_NONE: return "none";
    case RRU_STOP_LIMIT: return "instruction limit";
    case RRU_STOP_ECALL: return "ecall";
    case RRU_STOP_EBREAK: return "breakpoint";
    case RRU_STOP_ILLEGAL: return "illegal instruction";
    case RRU_STOP_FAULT: return "segmentation fault";
    case RRU_STOP_MISALIGNED: return "misaligned atomic access";
    case RRU_STOP_REQUEST: return "stop request";
    case RRU_STOP_TIMER: return "timer";
    case RRU_STOP_ALARM: return "alarm";
    case RRU_STOP_IDLE: return "idle";
    }
    return "?";
}

/* ---- decoded-block cache ---- */

static void arena_free_all(rru_arena_chunk *c)
{
    while (c) {
        rru_arena_chunk *n = c->next;
        free(c);
        c = n;
    }
}

void rru_hart_flush_code(rru_hart *h)
{
    if (h->arena) {
        arena_free_all(h->arena->next);
        h->arena->next = NULL;
        h->arena->used = 0;
    }
    memset(h->buckets, 0, RRU_BUCKETS * sizeof h->buckets[0]);
    h->nblocks = 0;
}

static void *arena_alloc(rru_hart *h, size_t bytes)
{
    size_t words = (bytes + 7) / 8;
    rru_arena_chunk *c = h->arena;
    if (!c || c->used + words > c->cap) {
        size_t cap = ARENA_CHUNK / 8;
        if (words > cap)
            cap = words;
        rru_arena_chunk *n = malloc(sizeof *n + cap * 8);
        if (!n)
            return NULL;
        n->used = 0;
        n->cap = cap;
        n->next = c;
        h->arena = c = n;
    }
    void *p = &c->data[c->used];
    c->used += words;
    return p;
}

static int ends_block(unsigned op)
{
    switch (op) {
    case RRU_OP_jal: case RRU_OP_jalr:
    case RRU_OP_beq: case RRU_OP_bne: case RRU_OP_blt:
    case RRU_OP_bge: case RRU_OP_bltu: case RRU_OP_bgeu:
    case RRU_OP_ecall: case RRU_OP_ebreak: case RRU_OP_fence_i:
    case RRU_OP_illegal:
        return 1;
    default:
        return 0;
    }
}

/* A fetchable page (mapped, executable), marked as holding code. */
static rru_page *fetch_page(rru_hart *h, uint64_t a)
{
    rru_page *p = rru_mem_page(h->mem, a);
    if (!p || !(p->prot & RRU_PROT_X))
        return NULL;
    if (!atomic_load_explicit(&p->code, memory_order_relaxed)) {
        rru_mem_mark_code(h->mem, p);
        /* This hart must not keep writing it through its TLB either. */
        rru_tlb *e = &h->tlb[(p->addr >> RRU_PAGE_SHIFT) & (RRU_TLB_N - 1)];
        if (e->page == p)
            e->wtag = ~0ull;
    }
    return p;
}

/* Decodes the block at PC. NULL with a fetch trap set if PC cannot be
 * fetched, or with trap cause 0 if host memory ran out. */
static rru_block *decode_block(rru_hart *h, uint64_t pc)
{
    rru_insn tmp[RRU_BLOCK_MAX];
    unsigned n = 0;
    uint64_t a = pc;
    rru_page *p = fetch_page(h, pc);
    if (!p) {
        rru_trap(h, NULL, RRU_CAUSE_FETCH_FAULT, pc);
        return NULL;
    }
    while (n < RRU_BLOCK_MAX) {
        if ((a & ~(RRU_PAGE_SIZE - 1)) != p->addr)
            break;   /* blocks stay on one page (an instruction may straddle) */
        size_t off = a & (RRU_PAGE_SIZE - 1);
        uint32_t bits = (uint32_t)p->data[off] | (uint32_t)p->data[off + 1] << 8;
        if ((bits & 3) == 3) {
            if (off + 2 < RRU_PAGE_SIZE) {
                bits |= ((uint32_t)p->data[off + 2] | (uint32_t)p->data[off + 3] << 8) << 16;
            } else {
                rru_page *q = fetch_page(h, a + 2);
                if (!q) {
                    if (n == 0) {
                        rru_trap(h, NULL, RRU_CAUSE_FETCH_FAULT, a + 2);
                        return NULL;
                    }
                    break;
                }
                bits |= ((uint32_t)q->data[0] | (uint32_t)q->data[1] << 8) << 16;
            }
        }
        int len = rru_decode(bits, a, &tmp[n]);
        if (n > 0)
            rru_forward(&tmp[n], &tmp[n - 1]);
        a += (uint64_t)len;
        if (ends_block(tmp[n++].op))
            break;
    }
    if (h->nblocks >= ARENA_LIMIT_BLOCKS)
        rru_hart_flush_code(h);
    rru_block *b = arena_alloc(h, sizeof(rru_block) + (n + 1) * sizeof(rru_insn));
    if (!b) {
        h->trap_cause = 0;
        return NULL;
    }
    b->pc = pc;
    b->n = n;
    for (unsigned w = 0; w < 2; w++)
        b->link[w] = (rru_link){.blk = NULL, .pc = 1, .span = 0};
    memcpy(b->insns, tmp, n * sizeof(rru_insn));
    rru_insn *end = &b->insns[n];
    memset(end, 0, sizeof *end);
    end->fn = rru_x_fall;
    end->pc = a;
    end->op = RRU_OP_illegal;
    rru_block **bucket = &h->buckets[(pc >> 1) & (RRU_BUCKETS - 1)];
    b->hnext = *bucket;
    *bucket = b;
    h->nblocks++;
    return b;
}

/* The first LIM (< b->n) instructions of B and a sentinel after them, in
 * the hart's cut buffer: a run that must stop inside a block runs this.
 * Its sentinel ends the chain (rru_x_end), and it is never linked. */
static rru_block *cut_block(rru_hart *h, const rru_block *b, unsigned lim)
{
    rru_block *c = h->cut;
    c->pc = b->pc;
    c->n = lim;
    c->link[0] = c->link[1] = (rru_link){.blk = NULL, .pc = 1, .span = 0};
    memcpy(c->insns, b->insns, lim * sizeof(rru_insn));
    rru_insn *end = &c->insns[lim];
    memset(end, 0, sizeof *end);
    end->fn = rru_x_end;
    end->pc = b->insns[lim].pc;
    end->op = RRU_OP_illegal;
    return c;
}

/* The decoded block at PC, or NULL. */
static inline rru_block *find_block(const rru_hart *h, uint64_t pc)
{
    rru_block *b = h->buckets[(pc >> 1) & (RRU_BUCKETS - 1)];
    while (b && b->pc != pc)
        b = b->hnext;
    return b;
}

static inline rru_block *lookup_block(rru_hart *h, uint64_t pc)
{
    rru_block *b = find_block(h, pc);
    return b ? b : decode_block(h, pc);
}

int rru_relink(rru_hart *h, const rru_insn *d, rru_link *l, uint64_t pc, int status)
{
    /* Inside a chain nothing may be decoded: decoding may drop the arena,
     * the current block with it. */
    rru_block *nb = find_block(h, pc);
    if (nb) {
        *l = (rru_link){.blk = nb, .pc = pc, .span = (uint64_t)h->cur_blk->n + nb->n};
        if (rru_may_chain(h, l->span))
            return rru_chain(h, nb, pc);
    }
    h->ctx.pc = pc;
    return rru_exit(h, d, status);
}

/* ---- harts ---- */

void rru_hart_flush_tlb(rru_hart *h)
{
    for (unsigned i = 0; i < RRU_TLB_N; i++) {
        h->tlb[i].rtag = h->tlb[i].wtag = ~0ull;
        h->tlb[i].host = NULL;
        h->tlb[i].page = NULL;
    }
}

int rru_hart_init(rru_hart *h, rru_mem *mem, unsigned id)
{
    memset(h, 0, sizeof *h);
    h->mem = mem;
    h->id = id;
    h->time_div = 100;
    h->buckets = calloc(RRU_BUCKETS, sizeof h->buckets[0]);
    h->cut = malloc(sizeof(rru_block) + (RRU_BLOCK_MAX + 1) * sizeof(rru_insn));
    if (!h->buckets || !h->cut) {
        free(h->buckets);
        free(h->cut);
        return -1;
    }
    rru_hart_flush_tlb(h);
    h->tlb_gen = rru_mem_tlb_gen(mem);
    h->code_gen = rru_mem_code_gen(mem);
    return 0;
}

void rru_hart_fini(rru_hart *h)
{
    arena_free_all(h->arena);
    h->arena = NULL;
    free(h->buckets);
    h->buckets = NULL;
    free(h->cut);
    h->cut = NULL;
}

void rru_hart_set_mem(rru_hart *h, rru_mem *mem)
{
    if (h->mem == mem)
        return;
    /* Translations and decoded blocks are the old memory's (blocks are
     * cached by pc alone), and so is a reservation. */
    h->mem = mem;
    rru_hart_flush_tlb(h);
    rru_hart_flush_code(h);
    h->tlb_gen = rru_mem_tlb_gen(mem);
    h->code_gen = rru_mem_code_gen(mem);
    h->ctx.resv_valid = 0;
}

rru_hart *rru_hart_new(rru_mem *mem, unsigned id)
{
    rru_hart *h = aligned_alloc(64, (sizeof(rru_hart) + 63) & ~(size_t)63);
    if (!h)
        return NULL;
    if (rru_hart_init(h, mem, id) != 0) {
        free(h);
        return NULL;
    }
    return h;
}

void rru_hart_free(rru_hart *h)
{
    if (!h)
        return;
    rru_hart_fini(h);
    free(h);
}

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Four independent multiply-rotate lanes over the 64 register words (so
 * the multiplications overlap), folded by a full mix at the end. In loop
 * form (docs/formats.md relies on this value: it is the CHECK record's
 * hash), with h = {1, 2, 3, 4} and k as below:
 *   for r in 1..31: v = (h[r & 3] ^ x[r]) * k[r & 3];
 *                   h[r & 3] = v rotated left by 29
 *   for r in 0..31: v = (h[(r + 1) & 3] ^ f[r]) * k[(r + 2) & 3];
 *                   h[(r + 1) & 3] = v rotated left by 31
 * Written out with the lanes in four variables: an array indexed by r & 3
 * lives in memory, and every step then waits for the previous step's
 * store (the loop form took twice the samples in a recording's profile). */
#define HASH_STEP(lane, word, k, rot)                                                              \
    do {                                                                                           \
        uint64_t v_ = ((lane) ^ (word)) * (k);                                                     \
        (lane) = v_ << (rot) | v_ >> (64 - (rot));                                                 \
    } while (0)

uint64_t rru_ctx_hash(const rru_ctx *c)
{
    const uint64_t k0 = 0x9e3779b97f4a7c15ull, k1 = 0xc2b2ae3d27d4eb4full,
                   k2 = 0x165667b19e3779f9ull, k3 = 0xd6e8feb86659fd93ull;
    uint64_t h0 = 1, h1 = 2, h2 = 3, h3 = 4;
    HASH_STEP(h1, c->x[1], k1, 29);
    HASH_STEP(h2, c->x[2], k2, 29);
    HASH_STEP(h3, c->x[3], k3, 29);
    for (int r = 4; r < 32; r += 4) {
        HASH_STEP(h0, c->x[r], k0, 29);
        HASH_STEP(h1, c->x[r + 1], k1, 29);
        HASH_STEP(h2, c->x[r + 2], k2, 29);
        HASH_STEP(h3, c->x[r + 3], k3, 29);
    }
    for (int r = 0; r < 32; r += 4) {
        HASH_STEP(h1, c->f[r], k2, 31);
        HASH_STEP(h2, c->f[r + 1], k3, 31);
        HASH_STEP(h3, c->f[r + 2], k0, 31);
        HASH_STEP(h0, c->f[r + 3], k1, 31);
    }
    return mix64(mix64(h0 ^ mix64(h1)) ^ mix64(h2 + h3) ^ ((uint64_t)c->fflags << 32 | c->frm));
}
#undef HASH_STEP

rru_ctx *rru_hart_ctx(rru_hart *h) { return &h->ctx; }

void rru_hart_load(rru_hart *h, const rru_ctx *c)
{
    h->ctx = *c;
    h->ctx.x[0] = 0;
}

void rru_hart_save(const rru_hart *h, rru_ctx *c)
{
    *c = h->ctx;
    c->x[0] = 0;
    c->x[32] = 0;
}

unsigned rru_hart_id(const rru_hart *h) { return h->id; }

uint64_t rru_hart_instret(const rru_hart *h)
{
    return h->ctx.instret + rru_insn_index(h, h->cur_d);
}
rru_mem *rru_hart_mem(const rru_hart *h) { return h->mem; }

void rru_hart_set_env(rru_hart *h, const rru_env_ops *ops, void *env)
{
    h->env = ops;
    h->env_ctx = env;
}

void rru_hart_request_stop(rru_hart *h) { h->stop_req = 1; }

void rru_hart_set_softfp_only(rru_hart *h, int on) { h->softfp_only = (uint8_t)(on != 0); }

void rru_hart_sync(rru_hart *h)
{
    /* The host's FP environment is the fast path's precondition: checked
     * before every run, so that a caller that changed it stays exact. */
    h->fp_fast = (uint8_t)(!h->softfp_only && ffp_host_ready());
    uint64_t t = rru_mem_tlb_gen(h->mem), c = rru_mem_code_gen(h->mem);
    if (t != h->tlb_gen) {
        rru_hart_flush_tlb(h);
        h->tlb_gen = t;
    }
    if (c != h->code_gen) {
        rru_hart_flush_code(h);
        h->code_gen = c;
    }
}

static void fill_trap_stop(rru_hart *h, rru_stop *st, uint64_t pc)
{
    st->cause = h->trap_cause;
    st->tval = h->trap_tval;
    st->pc = pc;
    switch (h->trap_cause) {
    case RRU_CAUSE_ILLEGAL: st->reason = RRU_STOP_ILLEGAL; st->signal = SIGILL; break;
    case RRU_CAUSE_BREAKPOINT: st->reason = RRU_STOP_EBREAK; st->signal = SIGTRAP; break;
    case RRU_CAUSE_LOAD_MISALIGNED:
    case RRU_CAUSE_STORE_MISALIGNED: st->reason = RRU_STOP_MISALIGNED; st->signal = SIGBUS; break;
    case 0: /* host memory exhausted while decoding: report as a fault */
    default: st->reason = RRU_STOP_FAULT; st->signal = SIGSEGV; break;
    }
}

/* How many instructions one chain of blocks may run before it returns to
 * the loop. With sibling calls (gcc -O2) a chain runs in one frame and the
 * bound only costs a return now and then; without them (-O0, -O1: the
 * sanitizer builds) each body nests a frame, and this bounds the depth. */
#ifndef RRU_CHAIN_SPAN
#define RRU_CHAIN_SPAN 4096u
#endif

int rru_hart_run(rru_hart *h, uint64_t max, uint64_t time_end, uint64_t event_time, rru_stop *st)
{
    const uint64_t retired0 = h->retired;
    uint64_t done = 0;
    st->reason = RRU_STOP_NONE;
    st->signal = 0;
    st->cause = 0;
    st->tval = 0;
    /* A chain may go on into a block of n instructions at clock c only if
     * this loop would run it next, whole (rru_may_chain): no stop request,
     * c + n <= time_end (no time stop, no cut), c < event_time (after the
     * first block: no event stop; c + n <= event_time is stricter) and
     * done + n <= max (no limit stop, no cut). One bound on the clock
     * serves: chain_end = min(time_end, event_time, c0 + max - done0),
     * with c0 and done0 the clock and count when the loop dispatches; the
     * clock advances at least as much as the count (by each block's n, and
     * by stalls), so c + n <= chain_end implies done + n <= max. Declining
     * is always correct: the loop then runs the block itself. */
    const uint64_t clock_end = time_end < event_time ? time_end : event_time;
    int result;
    for (;;) {
        if (h->stop_req) {
            h->stop_req = 0;
            st->reason = RRU_STOP_REQUEST;
            st->pc = h->ctx.pc;
            result = RRU_STOP_REQUEST;
            break;
        }
        if (done >= max) {
            st->reason = RRU_STOP_LIMIT;
            st->pc = h->ctx.pc;
            result = RRU_STOP_LIMIT;
            break;
        }
        if (h->clock >= time_end) {
            st->pc = h->ctx.pc;
            result = RRU_RUN_TIME;
            break;
        }
        if (done && h->clock >= event_time) {
            st->pc = h->ctx.pc;
            result = RRU_RUN_EVENT;
            break;
        }
        rru_block *b = lookup_block(h, h->ctx.pc);
        if (RRU_UNLIKELY(!b)) {
            fill_trap_stop(h, st, h->ctx.pc);
            result = st->reason;
            break;
        }
        uint64_t lim = max - done, tl = time_end - h->clock;
        if (tl < lim)
            lim = tl;
        if (RRU_UNLIKELY(b->n > lim))
            b = cut_block(h, b, (unsigned)lim);
        uint64_t room = max - done;
        if (room > RRU_CHAIN_SPAN)
            room = RRU_CHAIN_SPAN;
        h->chain_end = h->clock + room < clock_end ? h->clock + room : clock_end;
        /* The whole block (or its head) as one chain of bodies, which may
         * go on into linked blocks (rru_leave: each retired whole, and
         * counted in clock, retired and instret); it returns from the
         * block h->cur_blk, at h->exit_d. */
        h->cur_blk = b;
        const int s = b->insns[0].fn(h, b->insns, 0);
        b = h->cur_blk;
        const rru_insn *d = h->exit_d;
        uint64_t n = (uint64_t)(d - b->insns);
        if (s == RRU_X_JUMP || s == RRU_X_ECALL || s == RRU_X_FENCEI)
            n++;
        h->cur_blk = NULL;
        h->clock += n;
        h->retired += n;
        h->ctx.instret += n;
        done = h->retired - retired0;
        if (RRU_LIKELY(s == RRU_X_JUMP || s == RRU_X_END))
            continue;
        if (s == RRU_X_FENCEI) {
            rru_hart_flush_code(h);
            h->code_gen = rru_mem_code_gen(h->mem);
            continue;
        }
        if (s == RRU_X_ECALL) {
            st->reason = RRU_STOP_ECALL;
            st->cause = RRU_CAUSE_ECALL_U;
            st->pc = d->pc;
            result = RRU_STOP_ECALL;
            break;
        }
        /* RRU_X_TRAP: the instruction at d did not retire. */
        h->ctx.pc = d->pc;
        fill_trap_stop(h, st, d->pc);
        result = st->reason;
        break;
    }
    st->insns = done;
    st->core = h->id;
    return result;
}

rru_stop_reason rru_hart_execute(rru_hart *h, uint64_t max_insns, rru_stop *stop)
{
    rru_hart_sync(h);
    int r = rru_hart_run(h, max_insns, UINT64_MAX, UINT64_MAX, stop);
    return (rru_stop_reason)r;
}
