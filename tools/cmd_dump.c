/* tools/cmd_dump.c: `rnr dump FILE`, a log as text. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "driver/driver.h"
#include "formats/dump.h"
#include "tools/cli.h"

const char cmd_dump_help[] =
    "usage: rnr dump FILE\n"
    "Prints a log of any kind (initial, input, maxpar, stitched, serial,\n"
    "stserial) as text: a header line starting with '#', then one line per\n"
    "record, numbered from 0. FILE may be '-' for standard input. An input\n"
    "log's system calls are named: 'syscall 214 brk = VALUE'.\n"
    "A damaged log prints its complete prefix, then the problem on stderr\n"
    "(exit 2). The line formats are described in docs/formats.md.\n";

/* The driver's table (driver/syscall_names.def) names the calls. */
static const char *syscall_name(uint64_t nr)
{
    if (nr > UINT32_MAX)
        return NULL;
    const char *name = drv_syscall_lookup((uint32_t)nr).name;
    return name && strcmp(name, "?") != 0 ? name : NULL;
}

int cmd_dump(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--") == 0) {
        /* "--" ends the options: FILE may start with '-'. */
        argv++;
        argc--;
    } else if (argc == 2 && argv[1][0] == '-' && argv[1][1] != '\0') {
        return cli_usage("dump", "unknown option '%s'", argv[1]);
    }
    if (argc != 2)
        return cli_usage("dump", argc < 2 ? "missing FILE" : "too many arguments");
    char err[RNR_ERR_MAX];
    rnr_reader *r = rnr_reader_open(argv[1], err, sizeof err);
    if (!r)
        return cli_bad_input("dump", "%s", err);
    int rc = rnr_log_dump_named(r, stdout, syscall_name, err, sizeof err);
    rnr_reader_close(r);
    if (fflush(stdout) != 0 || ferror(stdout))
        return cli_bad_input("dump", "<stdout>: write error");
    if (rc < 0)
        return cli_bad_input("dump", "%s", err);
    if (rc > 0)
        fprintf(stderr, "rnr dump: warning: %s (the complete prefix is shown)\n", err);
    return RNR_EXIT_OK;
}
