/* backend/truth.c: reading and writing ground-truth dependence files. */
#include "backend/truth.h"

#include "rru/alloc.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[] = { "raw", "war", "waw" };

const char *truth_kind_name(uint32_t kind) { return kind < 3 ? kind_names[kind] : "?"; }

int truth_write_header(FILE *f, uint32_t cpus)
{
    return fprintf(f, "rnr-truth %u cpus %u\n", TRUTH_VERSION, cpus) < 0 ? -1 : 0;
}

int truth_write(FILE *f, const truth_dep *d)
{
    int n = fprintf(f, "%s %" PRIx64 " %u %u %" PRIu64 " %" PRIu64 " %" PRIu64 " %u %u %" PRIu64
                       " %" PRIu64 " %" PRIu64 "\n",
                    truth_kind_name(d->kind), d->line, d->src.cpu, d->src.tid, d->src.insn,
                    d->src.tinsn, d->src.time, d->dst.cpu, d->dst.tid, d->dst.insn, d->dst.tinsn,
                    d->dst.time);
    return n < 0 ? -1 : 0;
}

void truth_add(truth_set *s, const truth_dep *d)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 256;
        s->dep = xrealloc(s->dep, cap * sizeof *s->dep);
        s->cap = cap;
    }
    s->dep[s->n++] = *d;
}

void truth_free(truth_set *s)
{
    free(s->dep);
    memset(s, 0, sizeof *s);
}

static int parse_u64(char **p, uint64_t *out, int base)
{
    while (**p == ' ')
        (*p)++;
    int c = (unsigned char)**p;
    int digit = (c >= '0' && c <= '9') ||
                (base == 16 && ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')));
    if (!digit)
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(*p, &end, base);
    if (errno || (*end != ' ' && *end != '\0' && *end != '\n'))
        return -1;
    *p = end;
    *out = v;
    return 0;
}

static int parse_access(char **p, truth_access *a, uint32_t cpus)
{
    uint64_t cpu, tid;
    if (parse_u64(p, &cpu, 10) || parse_u64(p, &tid, 10) || parse_u64(p, &a->insn, 10) ||
        parse_u64(p, &a->tinsn, 10) || parse_u64(p, &a->time, 10))
        return -1;
    if (cpu >= cpus || tid >= UINT32_MAX)
        return -1;
    a->cpu = (uint32_t)cpu;
    a->tid = (uint32_t)tid;
    return 0;
}

struct truth_reader {
    FILE *f;
    char *path, *line;
    size_t cap;
    unsigned long lineno;
    uint32_t cpus;
};

static int reader_fail(truth_reader *t, const char *problem, char *err, size_t errlen)
{
    if (t->lineno)
        snprintf(err, errlen, "%s: line %lu: %s", t->path, t->lineno, problem);
    else
        snprintf(err, errlen, "%s: %s", t->path, problem);
    return -1;
}

truth_reader *truth_reader_open(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    truth_reader *t = xcalloc(1, sizeof *t);
    t->f = f;
    t->path = xmalloc(strlen(path) + 1);
    memcpy(t->path, path, strlen(path) + 1);
    const char *problem = NULL;
    ssize_t len = getline(&t->line, &t->cap, f);
    if (len < 0) {
        problem = ferror(f) ? "read error" : "empty file, not a ground-truth file";
    } else {
        unsigned version, cpus;
        char tail;
        t->lineno = 1;
        if (sscanf(t->line, "rnr-truth %u cpus %u%c", &version, &cpus, &tail) != 3 || tail != '\n')
            problem = "not a ground-truth file (no 'rnr-truth 1 cpus N' header)";
        else if (version != TRUTH_VERSION)
            problem = "unsupported ground-truth version";
        else if (cpus < 1 || cpus > 1024)
            problem = "cpu count out of range";
        t->cpus = cpus;
    }
    if (problem) {
        reader_fail(t, problem, err, errlen);
        truth_reader_close(t);
        return NULL;
    }
    return t;
}

uint32_t truth_reader_cpus(const truth_reader *t) { return t->cpus; }
const char *truth_reader_name(const truth_reader *t) { return t->path; }

int truth_reader_next(truth_reader *t, truth_dep *d, char *err, size_t errlen)
{
    ssize_t len;
    while ((len = getline(&t->line, &t->cap, t->f)) >= 0) {
        t->lineno++;
        if (len <= 1 || t->line[0] == '#')
            continue;
        char *p = t->line;
        size_t k;
        for (k = 0; k < 3; k++) {
            size_t n = strlen(kind_names[k]);
            if (strncmp(p, kind_names[k], n) == 0 && p[n] == ' ')
                break;
        }
        if (k == 3)
            return reader_fail(t, "unknown dependence kind", err, errlen);
        d->kind = (uint32_t)k;
        p += strlen(kind_names[k]);
        if (parse_u64(&p, &d->line, 16) || parse_access(&p, &d->src, t->cpus) ||
            parse_access(&p, &d->dst, t->cpus))
            return reader_fail(t, "malformed dependence line", err, errlen);
        while (*p == ' ')
            p++;
        if (*p != '\n' && *p != '\0')
            return reader_fail(t, "trailing text after the dependence", err, errlen);
        return 1;
    }
    if (ferror(t->f))
        return reader_fail(t, "read error", err, errlen);
    return 0;
}

void truth_reader_close(truth_reader *t)
{
    if (!t)
        return;
    fclose(t->f);
    free(t->path);
    free(t->line);
    free(t);
}

int truth_load(const char *path, truth_set *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    truth_reader *t = truth_reader_open(path, err, errlen);
    if (!t)
        return -1;
    out->cpus = t->cpus;
    truth_dep d;
    int rc;
    while ((rc = truth_reader_next(t, &d, err, errlen)) == 1)
        truth_add(out, &d);
    truth_reader_close(t);
    if (rc < 0) {
        truth_free(out);
        return -1;
    }
    return 0;
}

/* ---- the tracker: conflicts of a stream of accesses ----
 *
 * Per line: the last write, and per CPU the last read since that write.
 * A read depends on the last write (RAW); only the first read of each CPU
 * after a write is listed, since later reads on that CPU follow it in the
 * CPU's order. A write depends on the last write (WAW) and on each CPU's
 * last read since it (WAR; earlier reads of that CPU precede that one).
 * Pairs of one thread on one CPU are program order and left out. */

typedef struct tline {
    uint64_t line;             /* key + 1 (0 = empty slot) */
    int has_write;
    uint64_t read_mask;        /* CPUs (< 64) that read since the last write */
    truth_access last_write;
    truth_access *readers;     /* [cpus]: last read since the write, tid UINT32_MAX = none */
} tline;

struct truth_tracker {
    uint32_t cpus;
    truth_emit_fn emit;
    void *ctx;
    tline *slot;
    size_t cap, used;
    uint64_t deps;
};

truth_tracker *truth_tracker_new(uint32_t cpus, truth_emit_fn emit, void *ctx)
{
    truth_tracker *t = xcalloc(1, sizeof *t);
    t->cpus = cpus;
    t->emit = emit;
    t->ctx = ctx;
    t->cap = 1024;
    t->slot = xcalloc(t->cap, sizeof *t->slot);
    return t;
}

void truth_tracker_free(truth_tracker *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->cap; i++)
        free(t->slot[i].readers);
    free(t->slot);
    free(t);
}

uint64_t truth_tracker_deps(const truth_tracker *t) { return t->deps; }

static size_t tline_hash(uint64_t line, size_t cap)
{
    return (size_t)((line * 0x9e3779b97f4a7c15ull) >> 17) & (cap - 1);
}

static tline *tline_get(truth_tracker *t, uint64_t line)
{
    if ((t->used + 1) * 2 > t->cap) {
        size_t cap = t->cap * 2;
        tline *n = xcalloc(cap, sizeof *n);
        for (size_t i = 0; i < t->cap; i++) {
            if (!t->slot[i].line)
                continue;
            size_t j = tline_hash(t->slot[i].line, cap);
            while (n[j].line)
                j = (j + 1) & (cap - 1);
            n[j] = t->slot[i];
        }
        free(t->slot);
        t->slot = n;
        t->cap = cap;
    }
    size_t j = tline_hash(line + 1, t->cap);
    while (t->slot[j].line && t->slot[j].line != line + 1)
        j = (j + 1) & (t->cap - 1);
    tline *l = &t->slot[j];
    if (!l->line) {
        l->line = line + 1;
        l->readers = xmalloc(t->cpus * sizeof *l->readers);
        for (uint32_t c = 0; c < t->cpus; c++)
            l->readers[c].tid = UINT32_MAX;
        t->used++;
    }
    return l;
}

static void tracker_emit(truth_tracker *t, uint32_t kind, uint64_t line, const truth_access *src,
                         const truth_access *dst)
{
    if (src->cpu == dst->cpu && src->tid == dst->tid)
        return;
    truth_dep d = { kind, line, *src, *dst };
    t->deps++;
    t->emit(t->ctx, &d);
}

void truth_tracker_access(truth_tracker *t, uint64_t line, const truth_access *a, int write)
{
    tline *l = tline_get(t, line);
    uint64_t bit = a->cpu < 64 ? 1ull << a->cpu : 0;
    if (!write) {
        if (l->has_write && !(l->read_mask & bit))
            tracker_emit(t, TRUTH_RAW, line, &l->last_write, a);
        l->read_mask |= bit;
        l->readers[a->cpu] = *a;
        return;
    }
    if (l->has_write)
        tracker_emit(t, TRUTH_WAW, line, &l->last_write, a);
    for (uint32_t c = 0; c < t->cpus; c++) {
        if (l->readers[c].tid != UINT32_MAX) {
            tracker_emit(t, TRUTH_WAR, line, &l->readers[c], a);
            l->readers[c].tid = UINT32_MAX;
        }
    }
    l->read_mask = 0;
    l->last_write = *a;
    l->has_write = 1;
}
