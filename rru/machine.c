/* rru/machine.c: the multicore: cores (harts with a filter, hooks, events),
 * the per-line directory (sharers, owner, time of the last transaction),
 * bus transactions with seeded latency, and the smallest-clock-first
 * schedule. docs/machine.md states the model and proves that timestamps
 * follow the real order; the proof's steps are marked (1)-(4) below. */
#include "rru/machine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rru/internal.h"

#define NONE UINT64_MAX

enum { CORE_IDLE, CORE_RUNNABLE, CORE_STOPPED };

typedef struct rru_core {
    rru_hart hart;                 /* first */
    unsigned idx;
    int state;
    unsigned epoch;                /* filter epoch, 1..RRU_EPOCH_MAX */
    const rru_core_ops *ops;
    void *rru;
    uint64_t ev_retired, ev_time;  /* one-shot event, NONE = off */
    uint64_t ev_fired_retired, ev_fired_clock;  /* where the last event fired */
    uint64_t timer;                /* NONE = off */
    uint64_t bus_reads, bus_exclusive, stall_cycles;
    uint64_t filter[RRU_FILTER_N];
} rru_core;

/* Directory: one entry per line, allocated per page of lines. */
typedef struct dir_line {
    uint64_t sharers;   /* bit c: core c holds a copy (the owner included) */
    uint64_t t;         /* time of the line's last bus transaction */
    int owner;          /* core holding it modified, or -1 */
} dir_line;

typedef struct dir_page {
    uint64_t page;      /* address >> RRU_PAGE_SHIFT */
    dir_line lines[RRU_PAGE_SIZE / RRU_LINE_SIZE];
} dir_page;

struct rru_machine {
    rru_machine_config cfg;
    rru_mem *mem;
    rru_core *cores[RRU_MAX_CORES];
    uint64_t rng;
    uint64_t alarm;
    dir_page **dir;     /* open addressing by page number */
    size_t dir_cap, dir_used;
    dir_page *dir_last; /* the page of the last lookup */
    uint64_t dir_floor; /* latest line.T of a line that left the directory */
    int slice_core;     /* the core whose slice is under way, -1 = choose */
    uint64_t slice_end; /* its bound (second-smallest clock + slice) */
    /* rru_page.coh_owner: a value no other machine, and this machine before
     * its last removal of a directory page, ever had. The guest pages of
     * every memory the cores run on (several processes' at one address)
     * may point to one directory page: a new tag invalidates them all at
     * once when it is freed. */
    uint64_t id;
    rru_trace_fn trace;
    void *trace_ctx;
    rru_bus_fn bus;     /* every transaction, once (rru_machine_set_bus) */
    void *bus_ctx;
    const rru_env_ops *env;
    void *env_ctx;
};

void rru_machine_config_default(rru_machine_config *c)
{
    c->cores = 8;
    c->seed = 1;
    c->miss_latency = 40;
    c->miss_jitter = 24;
    c->slice = 200;
    c->time_div = 100;
}

/* ---- directory ---- */

static size_t dir_hash(uint64_t page, size_t cap)
{
    return (size_t)((page * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
}

static int dir_grow(rru_machine *m)
{
    size_t cap = m->dir_cap ? m->dir_cap * 2 : 1024;
    dir_page **n = calloc(cap, sizeof *n);
    if (!n)
        return -1;
    for (size_t i = 0; i < m->dir_cap; i++) {
        dir_page *p = m->dir[i];
        if (!p)
            continue;
        size_t j = dir_hash(p->page, cap);
        while (n[j])
            j = (j + 1) & (cap - 1);
        n[j] = p;
    }
    free(m->dir);
    m->dir = n;
    m->dir_cap = cap;
    return 0;
}

static dir_page *dir_find(const rru_machine *m, uint64_t page)
{
    if (!m->dir_cap)
        return NULL;
    for (size_t j = dir_hash(page, m->dir_cap);; j = (j + 1) & (m->dir_cap - 1)) {
        dir_page *p = m->dir[j];
        if (!p || p->page == page)
            return p;
    }
}

/* The directory entry of LINE, created if absent. PG, if not NULL, is the
 * guest page holding LINE: it remembers its directory page (coh_dir), so
 * that the next lookup through it needs no hash probe. The pointer is
 * trusted only from this machine (coh_owner) and is cleared before its
 * directory page is freed (rru_machine_forget); a page that mem.c hands
 * out again starts with none. */
static dir_line *dir_get(rru_machine *m, rru_page *pg, uint64_t line)
{
    uint64_t page = line >> RRU_PAGE_SHIFT;
    dir_page *p = m->dir_last;
    if (p && p->page == page)
        return &p->lines[(line & (RRU_PAGE_SIZE - 1)) >> RRU_LINE_SHIFT];
    if (pg && pg->coh_owner == m->id && pg->coh_dir) {
        p = pg->coh_dir;
        m->dir_last = p;
        return &p->lines[(line & (RRU_PAGE_SIZE - 1)) >> RRU_LINE_SHIFT];
    }
    p = dir_find(m, page);
    if (!p) {
        if ((m->dir_used + 1) * 2 > m->dir_cap && dir_grow(m) != 0)
            goto oom;
        p = malloc(sizeof *p);
        if (!p)
            goto oom;
        p->page = page;
        for (unsigned i = 0; i < RRU_PAGE_SIZE / RRU_LINE_SIZE; i++) {
            p->lines[i].sharers = 0;
            p->lines[i].t = m->dir_floor;
            p->lines[i].owner = -1;
        }
        size_t j = dir_hash(page, m->dir_cap);
        while (m->dir[j])
            j = (j + 1) & (m->dir_cap - 1);
        m->dir[j] = p;
        m->dir_used++;
    }
    if (pg) {
        pg->coh_dir = p;
        pg->coh_owner = m->id;
    }
    m->dir_last = p;
    return &p->lines[(line & (RRU_PAGE_SIZE - 1)) >> RRU_LINE_SHIFT];
oom:
    fprintf(stderr, "rnr: out of memory for the coherence directory\n");
    abort();
}

/* Removes the entry of PAGE (linear probing: the entries after it in its
 * run move back so that every lookup still finds its page). */
static void dir_remove(rru_machine *m, uint64_t page)
{
    if (!m->dir_cap)
        return;
    size_t mask = m->dir_cap - 1, j = dir_hash(page, m->dir_cap);
    while (m->dir[j] && m->dir[j]->page != page)
        j = (j + 1) & mask;
    if (!m->dir[j])
        return;
    if (m->dir_last == m->dir[j])
        m->dir_last = NULL;
    free(m->dir[j]);
    m->dir[j] = NULL;
    m->dir_used--;
    for (size_t k = (j + 1) & mask; m->dir[k]; k = (k + 1) & mask) {
        size_t home = dir_hash(m->dir[k]->page, m->dir_cap);
        /* The entry at k may move to the hole at j if j lies on its probe
         * path, i.e. cyclically in [home, k). */
        if ((k > j && (home <= j || home > k)) || (k < j && home <= j && home > k)) {
            m->dir[j] = m->dir[k];
            m->dir[k] = NULL;
            j = k;
        }
    }
}

/* ---- filters ---- */

static uint64_t epoch_bits(unsigned e) { return (uint64_t)e << RRU_EPOCH_SHIFT; }

/* The key the interpreter's fast path compares a filter entry with. With
 * a trace hook, every access must reach the slow path (to be traced), so
 * the key gets a bit no entry has; the slow path still applies the filter
 * (rru_coh_access), so the RRU hooks see exactly what they see untraced. */
static void set_fkey(rru_core *c)
{
    c->hart.fkey = epoch_bits(c->epoch) | 7 | (c->hart.mach && c->hart.mach->trace ? RRU_FKEY_TRACED : 0);
}

static uint64_t *filter_slot(rru_core *c, uint64_t line) { return rru_filter_slot(&c->hart, line); }
static int filter_has(const uint64_t *e, uint64_t line) { return rru_filter_has(*e, line); }

void rru_machine_flush_filter(rru_machine *m, unsigned core)
{
    rru_core *c = m->cores[core];
    if (++c->epoch > RRU_EPOCH_MAX) {
        /* Epochs 1..RRU_EPOCH_MAX come round again: every entry moves to epoch
         * 0, which no key has (nothing counts as reported), while its line
         * and permission bits still prove what they proved. */
        for (unsigned i = 0; i < RRU_FILTER_N; i++)
            c->filter[i] &= ~RRU_EPOCH_BITS;
        c->epoch = 1;
    }
    set_fkey(c);
}

/* ---- machine ---- */

static uint64_t new_machine_tag(void)
{
    static _Atomic uint64_t tags;
    return atomic_fetch_add_explicit(&tags, 1, memory_order_relaxed) + 1;
}

rru_machine *rru_machine_new(const rru_machine_config *cfg, rru_mem *mem, char *err, size_t errlen)
{
    if (!cfg || cfg->cores < 1 || cfg->cores > RRU_MAX_CORES) {
        snprintf(err, errlen, "the number of cores must be from 1 to %d", RRU_MAX_CORES);
        return NULL;
    }
    if (cfg->slice < 1 || cfg->time_div < 1) {
        snprintf(err, errlen, "slice and time_div must be at least 1");
        return NULL;
    }
    rru_machine *m = calloc(1, sizeof *m);
    if (!m) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
        m->cfg = *cfg;
    m->mem = mem;
    m->id = new_machine_tag();
    m->rng = cfg->seed;
    m->alarm = NONE;
    m->slice_core = -1;
    for (unsigned i = 0; i < cfg->cores; i++) {
        rru_core *c = aligned_alloc(64, (sizeof(rru_core) + 63) & ~(size_t)63);
        if (!c || rru_hart_init(&c->hart, mem, i) != 0) {
            free(c);
            rru_machine_free(m);
            snprintf(err, errlen, "out of memory");
            return NULL;
        }
        m->cores[i] = c;
        c->idx = i;
        c->state = CORE_IDLE;
        c->ops = NULL;
        c->rru = NULL;
        c->ev_retired = c->ev_time = NONE;
        c->ev_fired_retired = c->ev_fired_clock = NONE;
        c->timer = NONE;
        c->bus_reads = c->bus_exclusive = c->stall_cycles = 0;
        memset(c->filter, 0, sizeof c->filter);
        c->epoch = 1;
        set_fkey(c);
        c->hart.coh = 1;
        c->hart.mach = m;
        c->hart.core = c;
        c->hart.filter = c->filter;
        c->hart.time_div = cfg->time_div;
    }
    return m;
}

void rru_machine_free(rru_machine *m)
{
    if (!m)
        return;
    for (unsigned i = 0; i < RRU_MAX_CORES; i++) {
        if (m->cores[i]) {
            rru_hart_fini(&m->cores[i]->hart);
            free(m->cores[i]);
        }
    }
    for (size_t i = 0; i < m->dir_cap; i++)
        free(m->dir[i]);
    free(m->dir);
    free(m);
}

unsigned rru_machine_cores(const rru_machine *m) { return m->cfg.cores; }
rru_mem *rru_machine_mem(const rru_machine *m) { return m->mem; }
const rru_machine_config *rru_machine_config_of(const rru_machine *m) { return &m->cfg; }
rru_hart *rru_machine_hart(rru_machine *m, unsigned core) { return &m->cores[core]->hart; }

void rru_machine_set_mem(rru_machine *m, unsigned core, rru_mem *mem)
{
    rru_hart_set_mem(&m->cores[core]->hart, mem);
}

void rru_machine_load(rru_machine *m, unsigned core, const rru_ctx *ctx)
{
    rru_core *c = m->cores[core];
    rru_hart_load(&c->hart, ctx);
    c->hart.ctx.resv_valid = 0;
    c->state = CORE_RUNNABLE;
}

void rru_machine_save(const rru_machine *m, unsigned core, rru_ctx *ctx)
{
    rru_hart_save(&m->cores[core]->hart, ctx);
}

void rru_machine_set_idle(rru_machine *m, unsigned core) { m->cores[core]->state = CORE_IDLE; }

void rru_machine_resume(rru_machine *m, unsigned core)
{
    if (m->cores[core]->state == CORE_STOPPED)
        m->cores[core]->state = CORE_RUNNABLE;
}

int rru_machine_runnable(const rru_machine *m, unsigned core)
{
    return m->cores[core]->state == CORE_RUNNABLE;
}

int rru_machine_is_idle(const rru_machine *m, unsigned core)
{
    return m->cores[core]->state == CORE_IDLE;
}

void rru_machine_request_stop(rru_machine *m, unsigned core) { m->cores[core]->hart.stop_req = 1; }
void rru_machine_set_timer(rru_machine *m, unsigned core, uint64_t t) { m->cores[core]->timer = t; }
void rru_machine_set_alarm(rru_machine *m, uint64_t t) { m->alarm = t; }

uint64_t rru_machine_clock(const rru_machine *m, unsigned core)
{
    const rru_hart *h = &m->cores[core]->hart;
    return rru_now(h, h->cur_d);
}

void rru_machine_advance_clock(rru_machine *m, unsigned core, uint64_t t)
{
    rru_hart *h = &m->cores[core]->hart;
    if (t > h->clock)
        h->clock = t;
}

uint64_t rru_machine_time(const rru_machine *m)
{
    uint64_t lo = NONE, hi = 0;
    for (unsigned i = 0; i < m->cfg.cores; i++) {
        uint64_t c = m->cores[i]->hart.clock;
        if (m->cores[i]->state == CORE_RUNNABLE && c < lo)
            lo = c;
        if (c > hi)
            hi = c;
    }
    return lo != NONE ? lo : hi;
}

uint64_t rru_machine_retired(const rru_machine *m, unsigned core)
{
    const rru_hart *h = &m->cores[core]->hart;
    return h->retired + rru_insn_index(h, h->cur_d);
}

void rru_machine_set_env(rru_machine *m, const rru_env_ops *ops, void *env)
{
    m->env = ops;
    m->env_ctx = env;
    for (unsigned i = 0; i < m->cfg.cores; i++)
        rru_hart_set_env(&m->cores[i]->hart, ops, env);
}

static void no_report(void *rru, unsigned core, uint64_t line, int write, uint64_t time,
                      uint64_t retired)
{
}

void rru_machine_attach(rru_machine *m, unsigned core, const rru_core_ops *ops, void *rru)
{
    m->cores[core]->ops = ops;
    m->cores[core]->rru = ops ? rru : NULL;
    /* report is set exactly when ops are (rru_coh_hit tells by it). */
    m->cores[core]->hart.report = !ops ? NULL : ops->access ? ops->access : no_report;
    m->cores[core]->hart.report_ctx = ops ? rru : NULL;
    rru_machine_flush_filter(m, core);
}

void rru_machine_set_event(rru_machine *m, unsigned core, uint64_t retired_at, uint64_t time_at)
{
    m->cores[core]->ev_retired = retired_at;
    m->cores[core]->ev_time = time_at;
}

void rru_machine_stats(const rru_machine *m, unsigned core, rru_core_stats *out)
{
    const rru_core *c = m->cores[core];
    out->retired = c->hart.retired;
    out->clock = c->hart.clock;
    out->bus_reads = c->bus_reads;
    out->bus_exclusive = c->bus_exclusive;
    out->stall_cycles = c->stall_cycles;
}

void rru_machine_set_bus(rru_machine *m, rru_bus_fn fn, void *ctx)
{
    m->bus = fn;
    m->bus_ctx = ctx;
}

void rru_machine_set_trace(rru_machine *m, rru_trace_fn fn, void *ctx)
{
    m->trace = fn;
    m->trace_ctx = ctx;
    for (unsigned i = 0; i < m->cfg.cores; i++)
        rru_machine_flush_filter(m, i);
}

void rru_machine_line_state(const rru_machine *m, uint64_t addr, uint64_t *sharers, int *owner)
{
    const dir_page *p = dir_find(m, addr >> RRU_PAGE_SHIFT);
    if (!p) {
        *sharers = 0;
        *owner = -1;
        return;
    }
    const dir_line *l = &p->lines[(addr & (RRU_PAGE_SIZE - 1)) >> RRU_LINE_SHIFT];
    *sharers = l->sharers;
    *owner = l->owner;
}

/* ---- coherence ---- */

static uint64_t next_random(rru_machine *m)
{
    uint64_t z = (m->rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Why timestamps follow the real order (docs/machine.md has the long form).
 * Let a (core i, time ta) happen before a conflicting b (core j, time tb).
 * (1) A core's clock never decreases and each access happens at its clock,
 *     so all of i's past accesses are at times <= c_i.
 * (2) i loses the permission a used only to a transaction Y that conflicts
 *     with it, whose time is >= c_i + 1 > ta; line.T only grows, so
 *     ta < line.T afterwards.
 * (3) j holds no permission for b at the time of a (a write makes i the only
 *     holder; a read leaves j without ownership), so j makes a transaction X
 *     after a and no later than b: tb >= T_X.
 * (4) T_X >= c_i + 1 > ta if i still holds a's permission (it conflicts
 *     with X), else T_X >= line.T > ta by (2). Hence ta < tb. */
uint64_t rru_coh_miss(rru_hart *h, const rru_insn *d, rru_page *pg, uint64_t line, int write)
{
    rru_machine *m = h->mach;
    rru_core *rc = h->core;
    const unsigned r = rc->idx;
    const uint64_t rbit = 1ull << r;
    h->cur_d = d;
    uint64_t now = rru_now(h, d), t = now;
    /* Already reported in this filter epoch (the fast path's test, for
     * accesses that come here for another reason: a TLB miss, a trace;
     * with an RRU attached rru_coh_hit took those, so this is 0). */
    uint64_t *slot = filter_slot(rc, line), key = line | epoch_bits(rc->epoch) | 7;
    int reported = write ? *slot == key : (*slot | 6) == key;

    /* With an RRU attached, a line whose filter entry proves the
     * permission (of an older epoch: the RRU's cluster boundaries flush
     * the filter; or of this one, for a first write after reads) is a hit
     * that rru_coh_hit did: the directory is not looked up. Without one
     * the directory is, and says the same.
     * Entry bits: 0, the core is among L's sharers; 2, it is L's owner;
     * 1, stores may use the entry directly (the fast path's write test
     * wants all three and this epoch; with an RRU attached bit 1 also
     * means the write was reported in that epoch, so a line only read so
     * far is reported again when first written). Invariant: bits 0 and 2
     * are true of the directory. Entries are written only here and by
     * rru_coh_hit, after the access made it so; a transaction of another
     * core that takes the permission away clears bits 1 and 2 (a read
     * ends ownership) or the whole entry (a write, rru_machine_forget),
     * whatever its epoch (filter_has ignores epochs). */

    dir_line *l = dir_get(m, pg, line);

    int miss = write ? l->owner != (int)r : !(l->sharers & rbit);
    if (miss) {
        /* A bus transaction. T = max(now + latency, line.T, c_h + 1 for
         * every other core h holding the line in a conflicting state):
         * steps (2) and (4) of the proof need exactly these terms. */
        uint64_t lat = m->cfg.miss_latency;
        if (m->cfg.miss_jitter)
            lat += next_random(m) % m->cfg.miss_jitter;
        t = now + lat;
        if (l->t > t)
            t = l->t;
        uint64_t conflicting = write ? (l->sharers & ~rbit)
                                     : (l->owner >= 0 && l->owner != (int)r ? 1ull << l->owner : 0);
        for (uint64_t s = conflicting; s; s &= s - 1) {
            uint64_t ch = m->cores[__builtin_ctzll(s)]->hart.clock;   /* not running: exact */
            if (ch + 1 > t)
                t = ch + 1;
        }
        /* The requester waits until T: its clock (1) never goes back. */
        h->clock += t - now;
        rc->stall_cycles += t - now;
        if (write)
            rc->bus_exclusive++;
        else
            rc->bus_reads++;

        rru_bus b = { r, line, write, t };
        if (m->bus)
            m->bus(m->bus_ctx, &b);
        for (unsigned k = 0; k < m->cfg.cores; k++) {
            rru_core *kc = m->cores[k];
            if (k != r && kc->ops && kc->ops->snoop)
                kc->ops->snoop(kc->rru, k, &b);
        }

        if (write) {
            for (uint64_t s = l->sharers & ~rbit; s; s &= s - 1) {
                uint64_t *e = filter_slot(m->cores[__builtin_ctzll(s)], line);
                if (filter_has(e, line))
                    *e = 0;
            }
            /* Other harts' stores break LR reservations on the line. */
            for (unsigned k = 0; k < m->cfg.cores; k++) {
                rru_ctx *kx = &m->cores[k]->hart.ctx;
                if (k != r && kx->resv_valid && (kx->resv_addr & ~(RRU_LINE_SIZE - 1)) == line)
                    kx->resv_valid = 0;
            }
            l->sharers = rbit;
            l->owner = (int)r;
        } else {
            if (l->owner >= 0 && l->owner != (int)r) {
                uint64_t *e = filter_slot(m->cores[l->owner], line);
                if (filter_has(e, line))
                    *e &= ~6ull;
                l->owner = -1;
            }
            l->sharers |= rbit;
            /* Nobody else holds it: the copy is exclusive (MESI's E, kept
             * as ownership), so a later store needs no transaction. Other
             * cores' requests treat it as modified: conservative. */
            if (l->sharers == rbit)
                l->owner = (int)r;
        }
        l->t = t;   /* (2): line.T only grows, since t >= old line.T */
    }

    if (rc->ops && rc->ops->access && !reported)
        rc->ops->access(rc->rru, r, line, write, t, h->retired + rru_insn_index(h, d));
    /* With an RRU attached, a line read so far is reported again when first
     * written; without one, ownership alone allows stores. */
    const unsigned owned = l->owner == (int)r ? 4 : 0;
    unsigned perm = 1 | owned | ((write || (!rc->ops && owned)) ? 2 : 0);
    if (!reported || (perm & 2))
        *slot = line | epoch_bits(rc->epoch) | perm;
    h->cur_d = NULL;
    return t;
}

void rru_coh_trace(rru_hart *h, const rru_insn *d, uint64_t addr, unsigned size, int write,
                   uint64_t time)
{
    rru_machine *m = h->mach;
    if (!m->trace)
        return;
    /* The hook counts retired instructions as the access hook does: up to
     * the instruction D making the access (rru_machine_retired). */
    h->cur_d = d;
    m->trace(m->trace_ctx, h->core->idx, addr, size, write, time);
    h->cur_d = NULL;
}

/* ---- unmapped memory ---- */

void rru_machine_forget(rru_machine *m, uint64_t addr, uint64_t len)
{
    uint64_t first = addr >> RRU_PAGE_SHIFT;
    uint64_t last = (addr + len - 1) >> RRU_PAGE_SHIFT;
    if (len == 0)
        return;
    for (uint64_t page = first; page <= last; page++) {
        dir_page *p = dir_find(m, page);
        if (!p)
            continue;
        /* No guest page, of any memory, trusts its pointer to the entry. */
        m->id = new_machine_tag();
        for (unsigned i = 0; i < RRU_PAGE_SIZE / RRU_LINE_SIZE; i++) {
            const dir_line *l = &p->lines[i];
            uint64_t line = (page << RRU_PAGE_SHIFT) + ((uint64_t)i << RRU_LINE_SHIFT);
            /* No core may keep using the line without a transaction. */
            for (uint64_t s = l->sharers; s; s &= s - 1) {
                uint64_t *e = filter_slot(m->cores[__builtin_ctzll(s)], line);
                if (filter_has(e, line))
                    *e = 0;
            }
            for (unsigned k = 0; k < m->cfg.cores; k++) {
                rru_ctx *kx = &m->cores[k]->hart.ctx;
                if (kx->resv_valid && (kx->resv_addr & ~(RRU_LINE_SIZE - 1)) == line)
                    kx->resv_valid = 0;
            }
            /* Keeps step (2) of the proof: a line that comes back starts
             * no earlier than the last transaction of any line that left. */
            if (l->t > m->dir_floor)
                m->dir_floor = l->t;
        }
        dir_remove(m, page);
    }
}

/* ---- syscall accesses ---- */

static int core_access(rru_machine *m, unsigned core, uint64_t addr, void *buf, size_t n, int write)
{
    rru_hart *h = &m->cores[core]->hart;
    uint8_t *b = buf;
    const unsigned need = write ? RRU_PROT_W : RRU_PROT_R;
    while (n) {
        if (addr >= RRU_ADDR_LIMIT)
            return -1;
        rru_page *p = rru_mem_page(h->mem, addr);
        if (!p || (p->prot & need) != need)
            return -1;
        uint64_t line = addr & ~(RRU_LINE_SIZE - 1);
        size_t k = (size_t)(line + RRU_LINE_SIZE - addr);
        if (k > n)
            k = n;
        const uint64_t t = rru_coh_access(h, NULL, p, line, write);
        rru_coh_trace(h, NULL, addr, (unsigned)k, write, t);
        size_t off = addr & (RRU_PAGE_SIZE - 1);
        if (write) {
            memcpy(p->data + off, b, k);
            if (atomic_load_explicit(&p->code, memory_order_relaxed))
                rru_mem_code_written(h->mem, p);
        } else {
            memcpy(b, p->data + off, k);
        }
        b += k;
        addr += k;
        n -= k;
    }
    return 0;
}

int rru_machine_read(rru_machine *m, unsigned core, uint64_t addr, void *buf, size_t n)
{
    return core_access(m, core, addr, buf, n, 0);
}

int rru_machine_write(rru_machine *m, unsigned core, uint64_t addr, const void *buf, size_t n)
{
    return core_access(m, core, addr, (void *)buf, n, 1);
}

/* ---- schedule ---- */

/* The schedule. A slice is chosen (the runnable core with the smallest
 * clock, ties to the lowest number) and runs until its clock passes the
 * second-smallest clock plus `slice`, a stop, the alarm or its timer. An
 * event of the core (a recorder's hook) pauses the slice at a block
 * boundary and the slice then goes on: events never change which core runs
 * when, so a run with hooks executes exactly what a run without executes. */
rru_stop_reason rru_machine_run(rru_machine *m, rru_stop *stop)
{
    memset(stop, 0, sizeof *stop);
    for (;;) {
        int r = m->slice_core;
        if (r < 0 || m->cores[r]->state != CORE_RUNNABLE) {
            uint64_t min1 = NONE, min2 = NONE;
            r = -1;
            for (unsigned i = 0; i < m->cfg.cores; i++) {
                if (m->cores[i]->state != CORE_RUNNABLE)
                    continue;
                uint64_t c = m->cores[i]->hart.clock;
                if (c < min1 || r < 0) {
                    min2 = min1;
                    min1 = c;
                    r = (int)i;
                } else if (c < min2) {
                    min2 = c;
                }
            }
            if (r < 0) {
                stop->reason = RRU_STOP_IDLE;
                return RRU_STOP_IDLE;
            }
            if (m->alarm != NONE && min1 >= m->alarm) {
                m->alarm = NONE;
                stop->core = (unsigned)r;
                stop->reason = RRU_STOP_ALARM;
                stop->pc = m->cores[r]->hart.ctx.pc;
                return RRU_STOP_ALARM;
            }
            m->slice_core = r;
            m->slice_end = min2 == NONE ? NONE : min2 + m->cfg.slice;
        }
        rru_core *c = m->cores[r];
        rru_hart *h = &c->hart;
        stop->core = (unsigned)r;
        int due = (c->ev_retired != NONE && h->retired >= c->ev_retired) ||
                  (c->ev_time != NONE && h->clock >= c->ev_time);
        /* An event re-armed for the point where one just fired waits for
         * progress, so a hook can never stall the machine. */
        if (due && !(h->retired == c->ev_fired_retired && h->clock == c->ev_fired_clock)) {
            c->ev_retired = c->ev_time = NONE;
            c->ev_fired_retired = h->retired;
            c->ev_fired_clock = h->clock;
            if (c->ops && c->ops->event)
                c->ops->event(c->rru, (unsigned)r);
            continue;
        }
        if (c->timer != NONE && h->clock >= c->timer) {
            c->timer = NONE;
            c->state = CORE_STOPPED;
            m->slice_core = -1;
            stop->reason = RRU_STOP_TIMER;
            stop->pc = h->ctx.pc;
            return RRU_STOP_TIMER;
        }
        rru_hart_sync(h);
        uint64_t end = m->slice_end;
        if (c->timer < end)
            end = c->timer;
        if (m->alarm < end)
            end = m->alarm;
        /* An event that is due but fired here already waits for progress:
         * the next block boundary. */
        uint64_t ev_end = due ? h->clock : c->ev_time;
        uint64_t max = !due && c->ev_retired != NONE ? c->ev_retired - h->retired : NONE;
        int res = rru_hart_run(h, max, end, ev_end, stop);
        stop->core = (unsigned)r;
        if (res == RRU_STOP_LIMIT || res == RRU_RUN_EVENT)
            continue;           /* an event pauses the slice */
        if (res == RRU_RUN_TIME) {
            m->slice_core = -1; /* the slice is over */
            continue;
        }
        c->state = CORE_STOPPED;
        m->slice_core = -1;
        return (rru_stop_reason)res;
    }
}
