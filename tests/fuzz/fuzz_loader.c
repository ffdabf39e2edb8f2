/* tests/fuzz/fuzz_loader.c: hostile ELF files through the driver's loader
 * and process setup (segments mapped, initial stack built): a clear error
 * or a process, never a crash; a process's pcs are named from whatever
 * symbol table the file has. The bytes go to a memory file so that the
 * same path-based entry point `rnr run` uses is exercised. */
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "driver/driver.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int fd = -1;
    if (fd < 0)
        fd = memfd_create("fuzz-elf", 0);
    if (fd < 0 || ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
        return 0;
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    drv_config cfg;
    drv_config_default(&cfg);
    cfg.machine.cores = 1;
    const char *argv[] = {"prog", "arg"};
    const char *envp[] = {"A=1"};
    char err[512];
    drv_proc *p = drv_proc_new(&cfg, path, argv, 2, envp, 1, err, sizeof err);
    if (p) {
        char sym[128];
        static const uint64_t pcs[] = {0, 0x10000, 0x10078, 0x2aaaaaa000ull, UINT64_MAX};
        for (size_t i = 0; i < sizeof pcs / sizeof pcs[0]; i++)
            drv_proc_symbolize(p, pcs[i], sym, sizeof sym);
        drv_proc_free(p);
    }
    else if (err[0] == 0)
        __builtin_trap();   /* a failure must say why */
    return 0;
}
