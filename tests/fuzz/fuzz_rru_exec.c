/* tests/fuzz/fuzz_rru_exec.c: arbitrary bytes as code (and register
 * values) on a standalone hart and on a two-core machine: whatever the
 * input, execution stops cleanly (limit, ecall, or a trap with a signal)
 * and the host never crashes. Also disassembles every halfword. */
#include <stdint.h>
#include <string.h>

#include "rru/hart.h"
#include "rru/machine.h"
#include "rru/mem.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CODE 0x10000ull
#define DATA 0x20000ull

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 8 || size > 16384)
        return 0;
    char buf[96];
    for (size_t i = 0; i + 4 <= size; i += 2) {
        uint32_t w;
        memcpy(&w, data + i, 4);
        rru_disasm(w, CODE + i, buf, sizeof buf);
    }
    rru_mem *m = rru_mem_new();
    rru_mem_map(m, CODE, 0x4000, RRU_PROT_R | RRU_PROT_W | RRU_PROT_X);
    rru_mem_map(m, DATA, 0x2000, RRU_PROT_R | RRU_PROT_W);
    rru_mem_write(m, CODE, data, size);
    rru_ctx c;
    rru_ctx_init(&c, CODE);
    for (int r = 1; r < 32; r++)
        c.x[r] = DATA + (uint64_t)((data[r % size] * 37) & 0x1ff8);
    c.frm = data[0] & 7;

    rru_hart *h = rru_hart_new(m, 0);
    rru_hart_load(h, &c);
    for (int round = 0; round < 8; round++) {
        rru_stop st;
        rru_stop_reason r = rru_hart_execute(h, 2000, &st);
        if (r == RRU_STOP_ECALL || r == RRU_STOP_LIMIT)
            continue;
        break;   /* a trap: the guest would die here */
    }
    rru_hart_free(h);

    rru_machine_config cfg;
    rru_machine_config_default(&cfg);
    cfg.cores = 2;
    cfg.seed = data[1];
    char err[64];
    rru_machine *mc = rru_machine_new(&cfg, m, err, sizeof err);
    rru_machine_load(mc, 0, &c);
    c.pc = CODE + (data[2] & 0xfe);
    rru_machine_load(mc, 1, &c);
    rru_machine_set_timer(mc, 0, 50000);
    rru_machine_set_timer(mc, 1, 50000);
    for (int round = 0; round < 16; round++) {
        rru_stop st;
        rru_stop_reason r = rru_machine_run(mc, &st);
        if (r == RRU_STOP_IDLE)
            break;
        if (r == RRU_STOP_ECALL)
            rru_machine_resume(mc, st.core);
        else
            rru_machine_set_idle(mc, st.core);
    }
    rru_machine_free(mc);
    rru_mem_free(m);
    return 0;
}
