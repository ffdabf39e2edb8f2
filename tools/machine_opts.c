/* tools/machine_opts.c: the options `rnr run` and `rnr record` share: the
 * simulated machine, the scheduler, the RRU and the guest's file access. */
#include <stdlib.h>
#include <string.h>

#include "tools/machine_opts.h"

void machine_opts_init(machine_opts *o, drv_config *cfg, int argc)
{
    drv_config_default(cfg);
    o->cfg = cfg;
    o->allow = calloc((size_t)argc + 1, sizeof *o->allow);
    o->nallow = 0;
}

void machine_opts_free(machine_opts *o)
{
    free(o->allow);
    o->allow = NULL;
}

static int parse_sig(const char *cmd, const char *s, rru_config *rc)
{
    uint64_t bits;
    if (strcmp(s, "exact") == 0) {
        rc->sig_bits = 0;
        return 0;
    }
    if (strncmp(s, "bloom:", 6) == 0 &&
        cli_parse_u64(cmd, "--sig bloom:", s + 6, 64, 1u << 24, &bits) == 0) {
        if (bits & (bits - 1)) {
            cli_usage(cmd, "--sig bloom:BITS wants a power of two, not %llu",
                      (unsigned long long)bits);
            return -1;
        }
        rc->sig_bits = (uint32_t)bits;
        return 0;
    }
    if (strncmp(s, "bloom:", 6) != 0)
        cli_usage(cmd, "--sig wants 'exact' or 'bloom:BITS', not '%s'", s);
    return -1;
}


int machine_opts_parse(machine_opts *o, const char *cmd, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    drv_config *cfg = o->cfg;
    if (strcmp(a, "--private-tmp") == 0) {
        cfg->private_tmp = 1;
        return 1;
    }
    static const char *const with_value[] = {MACHINE_OPTS_VALUED};
    int known = 0;
    for (size_t k = 0; k < sizeof with_value / sizeof with_value[0]; k++)
        known |= strcmp(a, with_value[k]) == 0;
    if (!known)
        return 0;
    if (*i + 1 >= argc) {
        cli_usage(cmd, "option %s needs an argument", a);
        return -1;
    }
    const char *v = argv[++*i];
    uint64_t n;
    if (strcmp(a, "-n") == 0 || strcmp(a, "--cpus") == 0) {
        if (cli_parse_u64(cmd, a, v, 1, RRU_MAX_CORES, &n) < 0)
            return -1;
        cfg->machine.cores = (unsigned)n;
    } else if (strcmp(a, "--seed") == 0) {
        if (cli_parse_u64(cmd, a, v, 0, UINT64_MAX, &cfg->machine.seed) < 0)
            return -1;
    } else if (strcmp(a, "--quantum") == 0) {
        if (cli_parse_u64(cmd, a, v, 0, UINT64_MAX / 4, &cfg->quantum) < 0)
            return -1;
    } else if (strcmp(a, "--msp") == 0) {
        if (cli_parse_u64(cmd, a, v, MACHINE_MIN_MSP, 1ull << 40, &cfg->rru.msp) < 0)
            return -1;
    } else if (strcmp(a, "--clusters") == 0) {
        if (cli_parse_u64(cmd, a, v, 2, 64, &n) < 0)
            return -1;
        cfg->rru.clusters = (uint32_t)n;
    } else if (strcmp(a, "--sig") == 0) {
        if (parse_sig(cmd, v, &cfg->rru) < 0)
            return -1;
    } else if (strcmp(a, "--chunk-max") == 0) {
        if (cli_parse_u64(cmd, a, v, 1, 1ull << 40, &cfg->rru.chunk_max) < 0)
            return -1;
    } else if (strcmp(a, "--cluster-chunks") == 0) {
        if (cli_parse_u64(cmd, a, v, 1, 1u << 20, &n) < 0)
            return -1;
        cfg->rru.cluster_chunks = (uint32_t)n;
    } else if (strcmp(a, "--mem-limit") == 0) {
        if (cli_parse_bytes(cmd, "--mem-limit", v, 1ull << 20, DRV_MEM_LIMIT_MAX, &cfg->mem_limit) < 0)
            return -1;
    } else {
        o->allow[o->nallow++] = v;
        cfg->allow_write = o->allow;
        cfg->n_allow_write = o->nallow;
    }
    return 1;
}
