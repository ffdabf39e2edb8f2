/* backend/truth.c: reading and writing ground-truth dependence files. */
#include "backend/truth.h"

#include "backend/alloc.h"

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

int truth_load(const char *path, truth_set *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    unsigned long lineno = 0;
    const char *problem = NULL;
    unsigned version, cpus;
    ssize_t len;
    while ((len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        if (lineno == 1) {
            char tail;
            if (sscanf(line, "rnr-truth %u cpus %u%c", &version, &cpus, &tail) != 3 || tail != '\n') {
                problem = "not a ground-truth file (no 'rnr-truth 1 cpus N' header)";
                break;
            }
            if (version != TRUTH_VERSION) {
                problem = "unsupported ground-truth version";
                break;
            }
            if (cpus < 1 || cpus > 1024) {
                problem = "cpu count out of range";
                break;
            }
            out->cpus = cpus;
            continue;
        }
        if (len <= 1 || line[0] == '#')
            continue;
        truth_dep d;
        char *p = line;
        size_t k;
        for (k = 0; k < 3; k++) {
            size_t n = strlen(kind_names[k]);
            if (strncmp(p, kind_names[k], n) == 0 && p[n] == ' ')
                break;
        }
        if (k == 3) {
            problem = "unknown dependence kind";
            break;
        }
        d.kind = (uint32_t)k;
        p += strlen(kind_names[k]);
        if (parse_u64(&p, &d.line, 16) || parse_access(&p, &d.src, cpus) ||
            parse_access(&p, &d.dst, cpus)) {
            problem = "malformed dependence line";
            break;
        }
        while (*p == ' ')
            p++;
        if (*p != '\n' && *p != '\0') {
            problem = "trailing text after the dependence";
            break;
        }
        truth_add(out, &d);
    }
    if (!problem && lineno == 0)
        problem = "empty file, not a ground-truth file";
    if (!problem && ferror(f))
        problem = "read error";
    free(line);
    fclose(f);
    if (problem) {
        if (lineno)
            snprintf(err, errlen, "%s: line %lu: %s", path, lineno, problem);
        else
            snprintf(err, errlen, "%s: %s", path, problem);
        truth_free(out);
        return -1;
    }
    return 0;
}
