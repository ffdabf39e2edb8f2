/* tools/cmd_dot.c: `rnr dot FILE`, the replay DAG of a final log in
 * Graphviz form. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "backend/dag.h"
#include "formats/log.h"
#include "tools/cli.h"

const char cmd_dot_help[] =
    "usage: rnr dot FILE\n"
    "Prints the replay DAG of the final log FILE (maxpar, stitched, serial or\n"
    "stserial) for Graphviz ('rnr dot maxpar.log | dot -Tsvg > dag.svg'): one box\n"
    "per chunk (CPU lane, index in the lane, TID, size), each recorded CPU's chunks\n"
    "in one column (a Graphviz group) linked by dashed program-order edges, and one\n"
    "solid edge per token, from the chunk that sends it to the chunk that awaits it.\n"
    "Serial logs are one chain.\n";

typedef struct dot_ctx {
    uint32_t cpus;
    uint64_t *last;          /* [cpu] lane index + 1 of the lane's last chunk */
} dot_ctx;

static int visit(void *vctx, const dag_node *n, uint64_t out[2])
{
    dot_ctx *d = vctx;
    const rnr_final_chunk *c = n->c;
    printf("  n%u_%" PRIu64 " [group=cpu%u, label=\"cpu %u #%" PRIu64 "\\ntid %u cs %" PRIu64 "\"];\n",
           c->cpu, n->lane_index, c->cpu, c->cpu, n->lane_index, c->tid, c->cs);
    if (d->last[c->cpu])
        printf("  n%u_%" PRIu64 " -> n%u_%" PRIu64 " [style=dashed];\n", c->cpu,
               d->last[c->cpu] - 1, c->cpu, n->lane_index);
    d->last[c->cpu] = n->lane_index + 1;
    for (uint32_t i = 0; i < n->npred; i++)
        printf("  n%u_%" PRIu64 " -> n%u_%" PRIu64 ";\n", n->pred[i].cpu, n->pred[i].index, c->cpu,
               n->lane_index);
    out[0] = out[1] = 0;
    return 0;
}

int cmd_dot(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--") == 0) {
        /* "--" ends the options: FILE may start with '-'. */
        argv++;
        argc--;
    } else if (argc == 2 && argv[1][0] == '-' && argv[1][1] != '\0') {
        return cli_usage("dot", "unknown option '%s'", argv[1]);
    }
    if (argc != 2)
        return cli_usage("dot", argc < 2 ? "missing FILE" : "too many arguments");
    char err[RNR_ERR_MAX];
    rnr_reader *r = rnr_reader_open(argv[1], err, sizeof err);
    if (!r)
        return cli_bad_input("dot", "%s", err);
    const rnr_log_header *h = rnr_reader_header(r);
    if (!rnr_log_kind_is_chunks(h->kind) || h->kind == RNR_LOG_INITIAL) {
        rnr_reader_close(r);
        return cli_bad_input("dot", "%s: a %s log has no replay DAG (run rnr maxpar first)", argv[1],
                             rnr_log_kind_name(h->kind));
    }
    uint64_t last[RNR_MAX_CPUS] = { 0 };
    dot_ctx d = { h->cpus, last };
    printf("digraph \"%s\" {\n  node [shape=box, fontsize=10];\n", rnr_log_kind_name(h->kind));
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
                             " awaits tokens from cpu %u that are never sent", argv[1], dr.stuck_cpu,
                             dr.stuck_lane_index, dr.stuck_from);
    return RNR_EXIT_OK;
}
