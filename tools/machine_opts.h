/* tools/machine_opts.h: parsing of the options `rnr run` and `rnr record`
 * share (machine, scheduler, RRU, --allow-write) into a drv_config. */
#ifndef RNR_TOOLS_MACHINE_OPTS_H
#define RNR_TOOLS_MACHINE_OPTS_H

#include <stddef.h>

#include "driver/driver.h"
#include "tools/cli.h"

/* The smallest MSP a recording accepts: the recorder drains at ticks every
 * MSP/16 cycles, which may come a few hundred cycles late (a slice of
 * run-ahead); below this the bounded-silence margin would not hold. */
#define MACHINE_MIN_MSP 4096u

typedef struct machine_opts {
    drv_config *cfg;
    const char **allow;   /* --allow-write values (owned array) */
    size_t nallow;
} machine_opts;

/* The help text of these options, for the commands' own help strings. */
#define MACHINE_OPTS_HELP                                                          \
    "Machine options:\n"                                                           \
    "  -n CPUS            simulated cores, 1..64 (default 8)\n"                     \
    "  --seed N           seed of the interleaving and of random inputs (default 1)\n" \
    "  --quantum CYCLES   mean preemption time slice (default 100000; 0 = none)\n"   \
    "  --msp CYCLES       RRU maximum silence period (default 100000, >= 4096)\n"   \
    "  --clusters K       RRU signature window in clusters, 2..64 (default 4)\n"    \
    "  --sig exact|bloom:BITS  RRU signatures: exact sets, or Bloom filters of\n"   \
    "                     BITS bits, a power of two 64..16777216 (default exact)\n" \
    "  --chunk-max INSNS  RRU chunk size limit (default 10000)\n"                   \
    "  --cluster-chunks N RRU chunks per cluster (default 4)\n"                     \
    "  --allow-write DIR  the guest may create and write files under DIR\n"         \
    "                     (repeatable; without it host files are read-only)\n"     \
    "  --private-tmp      the guest's /tmp and /dev/shm (shm_open, sem_open) are\n"  \
    "                     new empty directories of its own, writable, removed\n"  \
    "                     at the end (the host's unseen)\n"                       \
    "  --mem-limit BYTES  the guest's memory limit, its RLIMIT_AS (counting all\n"   \
    "                     but PROT_NONE reservations): an mmap, brk or mremap\n"   \
    "                     beyond it fails with ENOMEM; K, M or G suffix,\n"        \
    "                     1M..256G (default 4G)\n"

/* The machine options taking a value (for cli_normalize's lists). */
#define MACHINE_OPTS_VALUED                                                       \
    "-n", "--cpus", "--seed", "--quantum", "--msp", "--clusters", "--sig", "--chunk-max", \
        "--cluster-chunks", "--allow-write", "--mem-limit"

/* Fills CFG with the defaults; room for up to ARGC --allow-write values. */
void machine_opts_init(machine_opts *o, drv_config *cfg, int argc);
void machine_opts_free(machine_opts *o);
/* If argv[*i] is a machine option, consumes it (and its value: *i moves)
 * and returns 1; 0 if it is not one; -1 after a usage message. */
int machine_opts_parse(machine_opts *o, const char *cmd, int argc, char **argv, int *i);

#endif
