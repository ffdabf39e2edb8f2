/* rru/internal.h: what the interpreter's files share and nobody else sees:
 * the decoded instruction, the hart's layout, statuses of instruction
 * bodies, the inline fast paths of memory access. */
#ifndef RNR_RRU_INTERNAL_H
#define RNR_RRU_INTERNAL_H

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "rru/hart.h"
#include "rru/machine.h"
#include "rru/mem.h"

#define RRU_LIKELY(x) __builtin_expect(!!(x), 1)
#define RRU_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* ---- the instruction set, expanded from insns.def ---- */

typedef enum rru_op {
#define INSN(name, match, mask, fmt, ext) RRU_OP_##name,
#define CINSN(name, match, mask, ext)
#include "rru/insns.def"
#undef INSN
#undef CINSN
    RRU_OP_illegal,
    RRU_OP_COUNT
} rru_op;

/* Compressed rows, in table order. */
typedef enum rru_cop {
#define INSN(name, match, mask, fmt, ext)
#define CINSN(name, match, mask, ext) RRU_COP_##name,
#include "rru/insns.def"
#undef INSN
#undef CINSN
    RRU_COP_COUNT
} rru_cop;

typedef enum rru_fmt {
    RRU_FMT_R, RRU_FMT_FR, RRU_FMT_R4, RRU_FMT_I, RRU_FMT_FI, RRU_FMT_S, RRU_FMT_B,
    RRU_FMT_U, RRU_FMT_J, RRU_FMT_SH6, RRU_FMT_SH5, RRU_FMT_CSR, RRU_FMT_CSRI, RRU_FMT_N,
} rru_fmt;

/* One row of the table, for the decoder, the disassembler and the tests. */
typedef struct rru_insn_row {
    const char *name;        /* "fadd_s" */
    uint32_t match, mask;
    int fmt;                 /* rru_fmt, or -1 for a compressed row */
    int op;                  /* rru_op, or rru_cop for a compressed row */
    const char *ext;
} rru_insn_row;

extern const rru_insn_row rru_insn_rows[];
extern const unsigned rru_insn_nrows;

/* ---- decoded instructions ---- */

typedef struct rru_insn rru_insn;
/* The body of an instruction D. V is x[rd] of the instruction before D in
 * its block, as that one left it (any value for a block's first): every
 * body that goes on to the next instruction passes it on (rru_next reads
 * it back from the context, rru_next_v takes the result the body just
 * wrote there). That holds whatever the previous op was (rd is then only a
 * field: x[rd] as it stands), so that forwarding below never depends on
 * which ops write integer registers. */
typedef int (*rru_exec_fn)(rru_hart *h, const rru_insn *d, uint64_t v);

/* Forwarding: variants of a body that take rs1, rs2 or both from V rather
 * than from h->ctx.x. The decoder gives an instruction such a variant when
 * the previous instruction of the block has that register as its rd
 * (rru_forward), so a chain of dependent instructions passes values in a
 * host register instead of waiting for each store to the context to reach
 * the next load. A body file lists its variants in a table of these. */
typedef struct rru_fwd_row {
    uint16_t op;
    rru_exec_fn rs1, rs2, both;  /* NULL where the op has none */
} rru_fwd_row;

extern const rru_fwd_row rru_fwd_rvi[], rru_fwd_rvm[];
extern const unsigned rru_fwd_rvi_n, rru_fwd_rvm_n;

/* Statuses of instruction bodies. A body that completes normally does not
 * return a status: it continues with the next instruction of its block
 * itself (rru_next, a tail call), so a block runs as one chain of bodies
 * that returns once, from the instruction that leaves the straight line,
 * with h->exit_d pointing at it (rru_exit, rru_trap): */
enum {
    RRU_X_JUMP = 1,   /* retired; pc set (control transfer) */
    RRU_X_END,        /* block sentinel: not an instruction; pc set */
    RRU_X_ECALL,      /* retired; pc set past it; stop for the syscall */
    RRU_X_TRAP,       /* not retired; h->trap_cause / trap_tval set */
    RRU_X_FENCEI,     /* retired; pc set; drop decoded code */
};

struct rru_insn {
    rru_exec_fn fn;
    uint64_t pc;
    int64_t imm;
    uint32_t raw;       /* the instruction bits (16 or 32) */
    uint16_t op;        /* rru_op */
    uint8_t len;        /* 2 or 4 */
    uint8_t rd;         /* integer rd 0 is redirected to 32 (scratch) */
    uint8_t rs1, rs2, rs3;
    uint8_t rm;         /* funct3 */
};

#define INSN(name, match, mask, fmt, ext) \
    int rru_x_##name(rru_hart *h, const rru_insn *d, uint64_t v);
#define CINSN(name, match, mask, ext)
#include "rru/insns.def"
#undef INSN
#undef CINSN
int rru_x_illegal(rru_hart *h, const rru_insn *d, uint64_t v);
int rru_x_end(rru_hart *h, const rru_insn *d, uint64_t v);
int rru_x_fall(rru_hart *h, const rru_insn *d, uint64_t v);

/* Decodes BITS at PC into *d. Returns the length (2 or 4); an invalid
 * encoding gives op = RRU_OP_illegal (its body traps when executed). */
int rru_decode(uint32_t bits, uint64_t pc, rru_insn *d);
/* D follows PREV in a block: gives D the forwarding variant of its body
 * for the operands that are PREV's rd, if its op has one. */
void rru_forward(rru_insn *d, const rru_insn *prev);
/* The mnemonic of an op ("fadd.s"). */
const char *rru_op_name(unsigned op);

/* ---- guest memory internals (mem.c) ---- */

typedef struct rru_page {
    uint8_t *data;              /* RRU_PAGE_SIZE bytes */
    uint64_t addr;
    uint8_t prot;
    _Atomic uint8_t code;       /* some executor decoded instructions here */
    /* Its data is also another memory's page's (rru_mem_share): never
     * reused for another page, whichever memory lets it go. */
    uint8_t shared;
    struct rru_page *free_next;
    /* The coherence directory's entry for this page (machine.c), valid
     * only while coh_owner is the id of the machine that set it: a
     * shortcut around the directory's hash lookup. NULL on a new page. */
    void *coh_dir;
    uint64_t coh_owner;
} rru_page;

/* The page holding ADDR, or NULL. */
rru_page *rru_mem_page(const rru_mem *m, uint64_t addr);
/* Generations: tlb bumps when a cached translation may be wrong, code when
 * decoded instructions may be stale. */
uint64_t rru_mem_tlb_gen(const rru_mem *m);
uint64_t rru_mem_code_gen(const rru_mem *m);
/* A guest store hit a page with decoded code. */
void rru_mem_code_written(rru_mem *m, rru_page *p);
/* An executor decodes instructions on page P. */
void rru_mem_mark_code(rru_mem *m, rru_page *p);

/* ---- the hart ---- */

#define RRU_TLB_N 1024u
#define RRU_FILTER_N 8192u
#define RRU_BLOCK_MAX 48u
#define RRU_BUCKETS 8192u

typedef struct rru_tlb {
    uint64_t rtag;      /* page address if readable, else ~0 */
    uint64_t wtag;      /* page address if writable and holds no code, else ~0 */
    uint8_t *host;      /* page data */
    rru_page *page;
} rru_tlb;

/* How a block is left at its end, which picks its link. */
enum { RRU_WAY_JUMP = 0, RRU_WAY_FALL = 1 };

/* A block's last successor seen on one way out: the body that leaves the
 * block follows it (rru_leave), and sets it when it misses (rru_relink).
 * blk is NULL and pc odd (no instruction's) until it is set. A link
 * points only into the same arena as its block (a block found by pc among
 * the decoded ones), and the arena is dropped as a whole, links and all. */
typedef struct rru_link {
    struct rru_block *blk;
    uint64_t pc;                 /* blk->pc */
    uint64_t span;               /* the block's n + blk->n */
} rru_link;

typedef struct rru_block {
    uint64_t pc;
    struct rru_block *hnext;
    rru_link link[2];            /* by RRU_WAY_ */
    uint32_t n;                  /* instructions; insns[n] is the sentinel */
    uint32_t pad_;
    rru_insn insns[];
} rru_block;

typedef struct rru_arena_chunk {
    struct rru_arena_chunk *next;
    size_t used, cap;
    uint64_t data[];
} rru_arena_chunk;

struct rru_core;   /* machine.c */

/* A bit of the filter key that no entry has: with a trace hook every access
 * must reach the slow path (rru_coh_trace), so none may match. */
#define RRU_FKEY_TRACED (1ull << 48)

/* Filter entries (machine.c): line address (below RRU_ADDR_LIMIT = 2^48),
 * bit 48 for RRU_FKEY_TRACED (keys only), the epoch in bits 49-63,
 * permission bits in the line offset. */
#define RRU_EPOCH_SHIFT 49
#define RRU_EPOCH_MAX 32767u
#define RRU_EPOCH_BITS ((uint64_t)RRU_EPOCH_MAX << RRU_EPOCH_SHIFT)
_Static_assert(RRU_ADDR_LIMIT <= RRU_FKEY_TRACED && RRU_FKEY_TRACED < (1ull << RRU_EPOCH_SHIFT),
               "filter entry fields overlap");

struct rru_hart {
    rru_ctx ctx;                 /* first: registers at offset 0 */
    rru_mem *mem;
    unsigned id;
    int coh;                     /* 1: a machine core (coherence on) */
    struct rru_machine *mach;
    struct rru_core *core;
    uint64_t *filter;            /* RRU_FILTER_N entries: line | epoch | perm */
    uint64_t fkey;               /* epoch | 7, | RRU_FKEY_TRACED with a trace hook */
    /* The access hook of the RRU attached to the core (rru_core_ops.access,
     * or a no-op if it has none) and its context, set by
     * rru_machine_attach; NULL when no RRU is attached. */
    void (*report)(void *rru, unsigned core, uint64_t line, int write, uint64_t time,
                   uint64_t retired);
    void *report_ctx;

    /* clock and retired are not adjacent, so that gcc does not merge
     * their increments in rru_leave into one vector store (slower, and a
     * later 8-byte load of either would wait for it). */
    uint64_t clock;              /* at the start of the current block (+ stalls) */
    rru_block *cur_blk;          /* block being executed, or NULL */
    uint64_t retired;            /* core's retired count at the block start */
    const rru_insn *cur_d;       /* instruction in a slow path, or NULL */
    const rru_insn *exit_d;      /* the instruction the block's chain returned from */

    uint32_t trap_cause;
    uint64_t trap_tval;
    int stop_req;
    uint8_t fp_fast;             /* F/D arithmetic may use rru/fastfp.c: set
                                  * by rru_hart_sync, before every run */
    uint8_t softfp_only;         /* rru_hart_set_softfp_only */

    const rru_env_ops *env;
    void *env_ctx;
    uint32_t time_div;           /* cycles per time-CSR tick */

    uint64_t tlb_gen, code_gen;
    rru_tlb tlb[RRU_TLB_N];
    /* After the TLB, so that the fields before it keep their size: each
     * entry's tags and host pointer then share one cache line. */
    uint64_t chain_end;          /* rru_leave may go on into a block of n
                                  * instructions while clock + n <= this */
    rru_block **buckets;         /* RRU_BUCKETS chains by pc */
    rru_arena_chunk *arena;
    uint64_t nblocks;
    rru_block *cut;              /* RRU_BLOCK_MAX + 1 instructions: the head of
                                  * a block, cut where a run must stop */
};

/* Initialises / releases an embedded hart (machine cores, standalone). */
int rru_hart_init(rru_hart *h, rru_mem *mem, unsigned id);
void rru_hart_fini(rru_hart *h);

/* Internal run results besides rru_stop_reason values. */
#define RRU_RUN_TIME 100   /* clock reached time_end */
#define RRU_RUN_EVENT 101  /* clock reached event_time */

/* Runs at most MAX instructions. Time: before each block, it stops once
 * clock >= time_end, and a block starting at clock c runs at most
 * time_end - c instructions; once at least one block ran, it also stops
 * at a block boundary where clock >= event_time. An event stop never cuts
 * a block, so where later time stops fall does not depend on it (record
 * executes what run executes). Returns an rru_stop_reason (LIMIT, ECALL,
 * traps, REQUEST), RRU_RUN_TIME or RRU_RUN_EVENT; fills *stop for real
 * stops and stop->insns. */
int rru_hart_run(rru_hart *h, uint64_t max, uint64_t time_end, uint64_t event_time, rru_stop *stop);

/* Brings TLB and decoded code up to date with the memory's generations,
 * and fp_fast with the host's floating-point environment. Called before
 * every rru_hart_run. */
void rru_hart_sync(rru_hart *h);
void rru_hart_flush_tlb(rru_hart *h);

/* Clock and instret at instruction D of the current block. */
static inline uint64_t rru_insn_index(const rru_hart *h, const rru_insn *d)
{
    return (d && h->cur_blk) ? (uint64_t)(d - h->cur_blk->insns) : 0;
}
static inline uint64_t rru_now(const rru_hart *h, const rru_insn *d)
{
    return h->clock + rru_insn_index(h, d);
}

/* The end of every body that completes normally: the next instruction
 * (the block's sentinel after its last). A tail call where the compiler
 * can (no local of the caller's may have escaped); a nested call otherwise,
 * at most one frame per instruction of a chain (RRU_CHAIN_SPAN, hart.c,
 * bounds a chain's length). rru_enter starts the body of D. */
static inline int rru_enter(rru_hart *h, const rru_insn *d, uint64_t v)
{
    /* The empty asm keeps d in a register of its own, so that gcc ends a
     * body with "add $size, %rsi; jmp *(%rsi)" rather than four moves. */
    __asm__("" : "+r"(d));
    return d->fn(h, d, v);
}
static inline int rru_next(rru_hart *h, const rru_insn *d)
{
    return rru_enter(h, d + 1, h->ctx.x[d->rd]);
}
/* rru_next for a body that just wrote V to x[rd]. */
static inline int rru_next_v(rru_hart *h, const rru_insn *d, uint64_t v)
{
    return rru_enter(h, d + 1, v);
}

/* Leaves the block's chain at instruction D with STATUS. */
static inline int rru_exit(rru_hart *h, const rru_insn *d, int status)
{
    h->exit_d = d;
    return status;
}

/* Whether the run loop would run a block of N instructions next, whole,
 * after the current one ends: no stop request, and clock + n within
 * h->chain_end, which rru_hart_run sets within its time and instruction
 * bounds. */
static inline int rru_may_chain(const rru_hart *h, uint64_t n)
{
    return h->clock + n <= h->chain_end && !h->stop_req;
}

/* Does the run loop's bookkeeping for the current block, which ended with
 * all its n instructions retired, and goes on into block NB at PC. */
static inline int rru_chain(rru_hart *h, rru_block *nb, uint64_t pc)
{
    const rru_block *b = h->cur_blk;
    h->clock += b->n;
    h->retired += b->n;
    h->ctx.instret += b->n;
    h->ctx.pc = pc;
    h->cur_blk = nb;
    return rru_enter(h, nb->insns, 0);
}

/* The link L missed PC (hart.c): looks PC up among the decoded blocks
 * (never decodes), sets L to what it finds, and chains if it may;
 * otherwise leaves the chain with STATUS and pc set. */
int rru_relink(rru_hart *h, const rru_insn *d, rru_link *l, uint64_t pc, int status);

/* Leaves the current block at its end (D its last instruction, or its
 * sentinel) for PC, by its link L: into the linked block when L leads to
 * PC and the run loop would run that block next, whole (so the chain
 * stops, and counts, exactly where the loop would); otherwise the chain
 * returns STATUS to the loop with pc set. Either way every instruction of
 * the block left retired (the sentinel is none). Only blocks of the arena
 * end here, never a cut block (whose sentinel is rru_x_end), so the block
 * left has n instructions. */
static inline int rru_leave(rru_hart *h, const rru_insn *d, rru_link *l, uint64_t pc,
                            int status)
{
    if (RRU_UNLIKELY(l->pc != pc))
        return rru_relink(h, d, l, pc, status);
    if (RRU_LIKELY(rru_may_chain(h, l->span)))
        return rru_chain(h, l->blk, pc);
    h->ctx.pc = pc;
    return rru_exit(h, d, status);
}

/* Leaves the block by a jump to PC (a taken branch, jal, jalr). */
static inline int rru_jump(rru_hart *h, const rru_insn *d, uint64_t pc)
{
    return rru_leave(h, d, &h->cur_blk->link[RRU_WAY_JUMP], pc, RRU_X_JUMP);
}

/* Instruction D traps (does not retire). */
static inline int rru_trap(rru_hart *h, const rru_insn *d, uint32_t cause, uint64_t tval)
{
    h->trap_cause = cause;
    h->trap_tval = tval;
    return rru_exit(h, d, RRU_X_TRAP);
}

/* RISC-V exception causes. */
enum {
    RRU_CAUSE_ILLEGAL = 2,
    RRU_CAUSE_BREAKPOINT = 3,
    RRU_CAUSE_LOAD_MISALIGNED = 4,
    RRU_CAUSE_STORE_MISALIGNED = 6,
    RRU_CAUSE_ECALL_U = 8,
    RRU_CAUSE_FETCH_FAULT = 12,
    RRU_CAUSE_LOAD_FAULT = 13,
    RRU_CAUSE_STORE_FAULT = 15,
};

/* ---- memory access: inline fast paths, slow paths in access.c ---- */

enum { RRU_ACC_LOAD = 0, RRU_ACC_STORE = 1, RRU_ACC_AMO = 2 };

/* Generic path: permissions, page crossing, TLB fill, coherence, hooks. For
 * LOAD it copies into buf, for STORE from buf; for AMO (aligned, one line)
 * it returns through *amo_ptr a host pointer valid until the next access. */
int rru_access_slow(rru_hart *h, const rru_insn *d, uint64_t a, unsigned size, int kind,
                    void *buf, uint8_t **amo_ptr);

/* The filter entry of the line holding A, and whether entry E is of LINE
 * (of any epoch; an empty entry is of no line). */
static inline uint64_t *rru_filter_slot(const rru_hart *h, uint64_t a)
{
    return &h->filter[(a >> RRU_LINE_SHIFT) & (RRU_FILTER_N - 1)];
}
static inline int rru_filter_has(uint64_t e, uint64_t line)
{
    return (e & ~(RRU_EPOCH_BITS | 7)) == line && e != 0;
}

/* Filter check: the core holds the line and has reported it (coherence on),
 * or coherence is off. */
static inline int rru_filter_read_ok(const rru_hart *h, uint64_t a)
{
    return !h->coh || ((*rru_filter_slot(h, a) | 6) == ((a & ~(RRU_LINE_SIZE - 1)) | h->fkey));
}
static inline int rru_filter_write_ok(const rru_hart *h, uint64_t a)
{
    return !h->coh || (*rru_filter_slot(h, a) == ((a & ~(RRU_LINE_SIZE - 1)) | h->fkey));
}

/* The filter hit of rru_coh_access with an RRU attached, inline: LINE's
 * entry proves the permission (bit 0 for a read, bit 2 for a write), so
 * the access is a hit at the present time, with no directory lookup and
 * no bus transaction. A line already reported in this epoch (here for a
 * TLB miss or a trace) needs nothing more; otherwise (a cluster boundary
 * flushed the filter, or a line only read so far is first written) the
 * hook reports it and the entry gets the epoch read after the hook, which
 * may have ended the cluster: the line was reported into the new one.
 * Returns 1 with *T set if it did the access, 0 if rru_coh_miss must. */
static inline int rru_coh_hit(rru_hart *h, const rru_insn *d, uint64_t line, int write,
                              uint64_t *t)
{
    uint64_t *slot = rru_filter_slot(h, line);
    const uint64_t e = *slot;
    if (!h->report || !rru_filter_has(e, line) || (write && !(e & 4)))
        return 0;
    const uint64_t now = rru_now(h, d);
    const uint64_t key = line | (h->fkey & ~RRU_FKEY_TRACED);
    if (!(write ? e == key : (e | 6) == key)) {
        h->cur_d = d;
        h->report(h->report_ctx, h->id, line, write, now, h->retired + rru_insn_index(h, d));
        *slot = line | (h->fkey & RRU_EPOCH_BITS) | (write ? 7 : 1 | (e & 4));
        h->cur_d = NULL;
    }
    *t = now;
    return 1;
}

/* Copies SIZE bytes; constant sizes become plain moves instead of a memcpy
 * call. Inline, so that a body copying through a local's address passes
 * that address nowhere (its rru_next stays a tail call). */
static inline void rru_copy_bytes(void *dst, const void *src, unsigned size)
{
    switch (size) {
    case 1: memcpy(dst, src, 1); break;
    case 2: memcpy(dst, src, 2); break;
    case 4: memcpy(dst, src, 4); break;
    case 8: memcpy(dst, src, 8); break;
    default: memcpy(dst, src, size); break;
    }
}

/* The host address of a load (store) of SIZE bytes at A when the TLB and
 * the filter allow it directly, else NULL. Bodies that end in rru_next use
 * these and pass no address of a local, so that rru_next stays a tail call;
 * on NULL they finish in rru_load_slow / rru_store_slow. */
static inline const uint8_t *rru_load_direct(const rru_hart *h, uint64_t a, unsigned size)
{
    const rru_tlb *e = &h->tlb[(a >> RRU_PAGE_SHIFT) & (RRU_TLB_N - 1)];
    if (RRU_LIKELY((a & (~(RRU_PAGE_SIZE - 1) | (size - 1))) == e->rtag) &&
        RRU_LIKELY(rru_filter_read_ok(h, a)))
        return e->host + (a & (RRU_PAGE_SIZE - 1));
    return NULL;
}

static inline uint8_t *rru_store_direct(const rru_hart *h, uint64_t a, unsigned size)
{
    const rru_tlb *e = &h->tlb[(a >> RRU_PAGE_SHIFT) & (RRU_TLB_N - 1)];
    if (RRU_LIKELY((a & (~(RRU_PAGE_SIZE - 1) | (size - 1))) == e->wtag) &&
        RRU_LIKELY(rru_filter_write_ok(h, a)))
        return e->host + (a & (RRU_PAGE_SIZE - 1));
    return NULL;
}

/* The rest of a plain load (store) instruction D at A that missed the
 * direct path: the access through rru_access_slow (or its trap), the
 * register write as D's op says (width, sign extension, FP with NaN-boxing;
 * a store writes V's low bytes), then rru_next. */
int rru_load_slow(rru_hart *h, const rru_insn *d, uint64_t a);
int rru_store_slow(rru_hart *h, const rru_insn *d, uint64_t a, uint64_t v);

/* ---- coherence (machine.c): the slow path of a core's access ---- */

/* The rest of rru_coh_access: the directory (machine.c). Returns the
 * access time. */
uint64_t rru_coh_miss(rru_hart *h, const rru_insn *d, rru_page *pg, uint64_t line, int write);

/* Core h accesses LINE (write or not) on guest page PG for instruction D
 * (NULL: a syscall access): a bus transaction if the core lacks the
 * permission, hooks, filter update; advances h->clock by the wait.
 * Returns the access time. The filter hit inline, the rest out of line.
 * The time is returned, not stored through a pointer, so that a caller
 * passes no address of a local out of line and its own rru_next stays
 * a tail call (a call there nests the rest of the chain in its frame). */
static inline uint64_t rru_coh_access(rru_hart *h, const rru_insn *d, rru_page *pg,
                                      uint64_t line, int write)
{
    uint64_t t;
    if (rru_coh_hit(h, d, line, write, &t))
        return t;
    return rru_coh_miss(h, d, pg, line, write);
}
/* Trace hook of the machine (NULL if none). */
void rru_coh_trace(rru_hart *h, const rru_insn *d, uint64_t addr, unsigned size, int write,
                   uint64_t time);

/* ---- register access helpers for bodies ---- */

#define X(r) (h->ctx.x[(r)])
#define XS(r) ((int64_t)h->ctx.x[(r)])
#define RD (d->rd)
#define RS1 (d->rs1)
#define RS2 (d->rs2)
#define IMM (d->imm)
#define NEXT_PC (d->pc + d->len)

#endif
