/* tools/cmd_dot.c: `rnr dot FILE`, the replay DAG of a final log in
 * Graphviz form. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "backend/dag.h"
#include "formats/log.h"
#include "tools/cli.h"

const char cmd_dot_help[] =
    "usage: rnr dot [--from CPU:N] [--chunks K] [--force] FILE\n"
    "Prints the replay DAG of the final log FILE (maxpar, stitched, serial or\n"
    "stserial) for Graphviz ('rnr dot maxpar.log | dot -Tsvg > dag.svg'): one box\n"
    "per chunk (CPU lane, index in the lane, TID, size), each recorded CPU's chunks\n"
    "in one column (a Graphviz group) linked by dashed program-order edges, and one\n"
    "solid edge per token, from the chunk that sends it to the chunk that awaits it.\n"
    "Serial logs are one chain (CPU 0).\n"
    "A part of a big log: --from CPU:N starts at chunk N (from 0) of CPU's lane,\n"
    "--chunks K draws K chunks (default: to the end), in the order a replay may\n"
    "run them (each after the chunks it awaits); edges from chunks outside the\n"
    "part are left out. More than 20000 chunks to draw (a DOT file of megabytes\n"
    "that Graphviz takes long to lay out) are refused (exit 2) unless --force.\n";

/* Chunks drawn at most without --force. */
#define DOT_MAX_CHUNKS 20000

typedef struct dot_ctx {
    uint32_t cpus;
    uint64_t *last;          /* [cpu] lane index + 1 of the lane's last chunk drawn */
    uint64_t *first;         /* [cpu] lane index + 1 of the lane's first chunk drawn */
    int from_set;            /* --from given */
    uint32_t from_cpu;
    uint64_t from_index;
    uint64_t chunks;         /* --chunks (UINT64_MAX: all) */
    uint64_t drawn;
    int started;             /* the part has begun */
} dot_ctx;

static int visit(void *vctx, const dag_node *n, uint64_t out[2])
{
    dot_ctx *d = vctx;
    const rnr_final_chunk *c = n->c;
    out[0] = out[1] = 0;
    if (!d->started && (!d->from_set || (c->cpu == d->from_cpu && n->lane_index == d->from_index)))
        d->started = 1;
    if (!d->started || d->drawn >= d->chunks)
        return 0;
    d->drawn++;
    if (!d->first[c->cpu])
        d->first[c->cpu] = n->lane_index + 1;
    printf("  n%u_%" PRIu64 " [group=cpu%u, label=\"cpu %u #%" PRIu64 "\\ntid %u cs %" PRIu64 "\"];\n",
           c->cpu, n->lane_index, c->cpu, c->cpu, n->lane_index, c->tid, c->cs);
    if (d->last[c->cpu])
        printf("  n%u_%" PRIu64 " -> n%u_%" PRIu64 " [style=dashed];\n", c->cpu,
               d->last[c->cpu] - 1, c->cpu, n->lane_index);
    d->last[c->cpu] = n->lane_index + 1;
    /* A lane's chunks drawn are consecutive: a predecessor was drawn if its
     * lane index is not below its lane's first drawn. */
    for (uint32_t i = 0; i < n->npred; i++) {
        uint32_t pc = n->pred[i].cpu;
        if (pc < RNR_MAX_CPUS && d->first[pc] && n->pred[i].index + 1 >= d->first[pc])
            printf("  n%u_%" PRIu64 " -> n%u_%" PRIu64 ";\n", pc, n->pred[i].index, c->cpu,
                   n->lane_index);
    }
    return 0;
}

/* Chunks in the final log at PATH; -1 with err. */
static int64_t count_chunks(const char *path, char *err, size_t errlen)
{
    rnr_reader *r = rnr_reader_open(path, err, errlen);
    if (!r)
        return -1;
    rnr_final_chunk c;
    int64_t n = 0;
    int rc;
    while ((rc = rnr_reader_next_final(r, &c)) > 0)
        n++;
    if (rc < 0) {
        snprintf(err, errlen, "%s", rnr_reader_error(r));
        n = -1;
    }
    rnr_reader_close(r);
    return n;
}

int cmd_dot(int argc, char **argv)
{
    static const char *const valued[] = {"--from", "--chunks", NULL};
    cli_normalize(valued, 0, &argc, &argv);
    const char *path = NULL;
    int options = 1, force = 0;
    uint64_t first[RNR_MAX_CPUS] = { 0 }, last[RNR_MAX_CPUS] = { 0 };
    dot_ctx d = { 0, last, first, 0, 0, 0, UINT64_MAX, 0, 0 };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!options || a[0] != '-' || !a[1]) {
            if (path)
                return cli_usage("dot", "too many arguments");
            path = a;
        } else if (strcmp(a, "--") == 0) {
            options = 0;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(cmd_dot_help, stdout);
            return RNR_EXIT_OK;
        } else if (strcmp(a, "--force") == 0) {
            force = 1;
        } else if (strcmp(a, "--from") == 0 || strcmp(a, "--chunks") == 0) {
            if (i + 1 >= argc)
                return cli_usage("dot", "%s needs a value", a);
            const char *v = argv[++i];
            if (strcmp(a, "--chunks") == 0) {
                if (cli_parse_u64("dot", a, v, 1, UINT64_MAX - 1, &d.chunks) < 0)
                    return RNR_EXIT_USAGE;
                continue;
            }
            const char *colon = strchr(v, ':');
            char cpu[32];
            uint64_t c;
            if (!colon || (size_t)(colon - v) >= sizeof cpu)
                return cli_usage("dot", "--from wants CPU:N (a chunk of CPU's lane), not '%s'", v);
            memcpy(cpu, v, (size_t)(colon - v));
            cpu[colon - v] = '\0';
            if (cli_parse_u64("dot", "--from CPU", cpu, 0, RNR_MAX_CPUS - 1, &c) < 0 ||
                cli_parse_u64("dot", "--from N", colon + 1, 0, UINT64_MAX - 1, &d.from_index) < 0)
                return RNR_EXIT_USAGE;
            d.from_set = 1;
            d.from_cpu = (uint32_t)c;
        } else {
            return cli_usage("dot", "unknown option '%s'", a);
        }
    }
    if (!path)
        return cli_usage("dot", "missing FILE");
    char err[RNR_ERR_MAX];
    rnr_reader *r = rnr_reader_open(path, err, sizeof err);
    if (!r)
        return cli_bad_input("dot", "%s", err);
    const rnr_log_header *h = rnr_reader_header(r);
    uint32_t kind = h->kind;
    if (!rnr_log_kind_is_chunks(kind) || kind == RNR_LOG_INITIAL) {
        rnr_reader_close(r);
        return cli_bad_input("dot", "%s: %s %s log has no replay DAG (%s)", path,
                             rnr_log_kind_article(kind), rnr_log_kind_name(kind),
                             kind == RNR_LOG_INITIAL ? "rnr maxpar makes a final log of it"
                                                     : "rnr dot draws final logs");
    }
    if (!force) {
        int64_t total = count_chunks(path, err, sizeof err);
        if (total < 0) {
            rnr_reader_close(r);
            return cli_bad_input("dot", "%s", err);
        }
        uint64_t draw = d.chunks < (uint64_t)total ? d.chunks : (uint64_t)total;
        if (draw > DOT_MAX_CHUNKS) {
            rnr_reader_close(r);
            return cli_bad_input("dot", "%s: %" PRIu64 " chunks to draw, more than %d (megabytes of "
                                 "DOT): choose a part with --from CPU:N and --chunks K, or draw it "
                                 "all with --force", path, draw, DOT_MAX_CHUNKS);
        }
    }
    d.cpus = h->cpus;
    printf("digraph \"%s\" {\n  node [shape=box, fontsize=10];\n", rnr_log_kind_name(kind));
    dag_result dr;
    int rc = dag_walk(r, visit, &d, &dr, err, sizeof err);
    printf("}\n");
    rnr_reader_close(r);
    if (fflush(stdout) != 0)
        return cli_bad_input("dot", "<stdout>: write error");
    if (rc < 0)
        return cli_bad_input("dot", "%s", err);
    if (dr.stuck)
        return cli_bad_input("dot", "%s: the log cannot be replayed: cpu %u chunk %" PRIu64
                             " awaits tokens from cpu %u that are never sent", path, dr.stuck_cpu,
                             dr.stuck_lane_index, dr.stuck_from);
    if (d.from_set && !d.started)
        return cli_bad_input("dot", "%s: --from %u:%" PRIu64 ": cpu %u has no chunk %" PRIu64
                             " (lanes count from 0)", path, d.from_cpu, d.from_index, d.from_cpu,
                             d.from_index);
    return RNR_EXIT_OK;
}
