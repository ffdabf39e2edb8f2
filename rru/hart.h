/* rru/hart.h: one RV64GC user-level hart: the architectural thread context,
 * and the executor that runs "exactly N instructions of a context on a guest
 * memory" — the primitive that record (rru/machine.h) and replay share.
 * docs/machine.md describes the model, instruction counting and hooks. */
#ifndef RNR_RRU_HART_H
#define RNR_RRU_HART_H

#include <stddef.h>
#include <stdint.h>

#include "rru/mem.h"

/* ---- the architectural context of one guest thread ---- */

/* Plain data: the driver and the replayer read and write fields directly
 * (a0 = x[10], a7 = x[17], sp = x[2], tp = x[4]). */
typedef struct rru_ctx {
    uint64_t x[33];         /* x[0..31]; x[0] reads as 0; x[32] is scratch */
    uint64_t f[32];         /* f registers, 64 bits; singles NaN-boxed */
    uint64_t pc;
    uint32_t fflags;        /* accrued exceptions NV DZ OF UF NX (bits 4..0) */
    uint32_t frm;           /* dynamic rounding mode, 0..7 (5..7 invalid) */
    uint64_t instret;       /* instructions this thread retired */
    uint64_t resv_addr;     /* LR reservation (address of the LR) */
    uint32_t resv_valid;    /* while the reservation holds: the LR's size
                             * (4 or 8), else 0; an SC succeeds only with the
                             * same address and size */
    uint32_t pad_;
} rru_ctx;

/* Sets a context to its reset state: all registers 0, pc = entry,
 * frm = RNE, no reservation, instret 0. */
void rru_ctx_init(rru_ctx *c, uint64_t entry);
/* A 64-bit hash of the registers x1..x31, f0..f31, fflags and frm (not pc,
 * instret or the reservation): the register part of a recorded chunk's
 * check, computed the same way by record and replay. */
uint64_t rru_ctx_hash(const rru_ctx *c);

/* CSR numbers visible in user mode. */
enum {
    RRU_CSR_FFLAGS = 0x001,
    RRU_CSR_FRM = 0x002,
    RRU_CSR_FCSR = 0x003,
    RRU_CSR_CYCLE = 0xc00,
    RRU_CSR_TIME = 0xc01,
    RRU_CSR_INSTRET = 0xc02,
};

/* ---- why execution stopped ---- */

typedef enum rru_stop_reason {
    RRU_STOP_NONE = 0,
    RRU_STOP_LIMIT,      /* the requested instruction count retired */
    RRU_STOP_ECALL,      /* an ECALL retired (counted; pc is past it): a syscall */
    RRU_STOP_EBREAK,     /* EBREAK, not retired, pc at it: SIGTRAP */
    RRU_STOP_ILLEGAL,    /* illegal/unsupported instruction, not retired: SIGILL */
    RRU_STOP_FAULT,      /* unmapped or forbidden access, not retired: SIGSEGV */
    RRU_STOP_MISALIGNED, /* misaligned LR/SC/AMO, not retired: SIGBUS */
    RRU_STOP_REQUEST,    /* a stop was requested (rru_hart_request_stop) */
    RRU_STOP_TIMER,      /* machine: the core's timer expired (preemption) */
    RRU_STOP_ALARM,      /* machine: global time reached the alarm */
    RRU_STOP_IDLE,       /* machine: no core is runnable */
} rru_stop_reason;

typedef struct rru_stop {
    rru_stop_reason reason;
    unsigned core;       /* machine: the core that stopped; hart: its id */
    uint32_t cause;      /* RISC-V exception cause for traps (2 illegal,
                          * 3 breakpoint, 4/6 misaligned load/store-AMO,
                          * 8 ecall, 12/13/15 fetch/load/store page fault) */
    int signal;          /* Linux signal that ends the guest (SIGILL, SIGSEGV,
                          * SIGBUS, SIGTRAP), 0 for ECALL/LIMIT/REQUEST/TIMER/IDLE */
    uint64_t pc;         /* pc of the stopping instruction (ECALL: of the ecall) */
    uint64_t tval;       /* faulting address, or the illegal instruction's bits */
    uint64_t insns;      /* instructions retired by this call */
} rru_stop;

/* "SIGSEGV", "illegal instruction"-style names for messages. */
const char *rru_stop_name(rru_stop_reason r);

/* ---- the executor ---- */

typedef struct rru_hart rru_hart;

/* Nondeterministic inputs seen by the guest. Each callback may be NULL
 * (then the hardware value is used). They run on the executing host thread,
 * in the middle of an instruction: they must not call execute/run. */
typedef struct rru_env_ops {
    /* A read of time, cycle or instret: VALUE is what the simulated hardware
     * holds (cycle = the core's clock, time = clock / time_div, instret = the
     * context's instret before this instruction); return what the guest sees.
     * Record logs it; replay returns the logged value. */
    uint64_t (*csr_read)(void *env, rru_hart *h, unsigned csr, uint64_t value);
    /* Every SC: OK is the hart's verdict (1 = reservation holds); return the
     * verdict to apply. Record logs failures; replay returns the logged one
     * (SC outcomes depend on other harts, so replay takes them as inputs). */
    int (*sc)(void *env, rru_hart *h, uint64_t addr, int ok);
} rru_env_ops;

/* A standalone executor on MEM (not owned; it must outlive the hart), with
 * no coherence and no RRU: one per replay worker. ID is reported in stops.
 * NULL if memory is exhausted. Free with rru_hart_free. */
rru_hart *rru_hart_new(rru_mem *mem, unsigned id);
/* Frees a standalone hart (NULL is fine). Harts of a machine are freed by
 * the machine; never pass them here. */
void rru_hart_free(rru_hart *h);

/* The context loaded in the hart: the live registers. The pointer stays
 * valid for the hart's life; change it only while the hart is not running. */
rru_ctx *rru_hart_ctx(rru_hart *h);
/* Copies a context in / out. Neither touches the reservation: a context
 * switch in the OS sense clears it (rru_machine_load does; a replayer that
 * loads a context per chunk keeps it). */
void rru_hart_load(rru_hart *h, const rru_ctx *c);
void rru_hart_save(const rru_hart *h, rru_ctx *c);
unsigned rru_hart_id(const rru_hart *h);
/* Instructions the loaded context retired: exact, also inside an env
 * callback (then those before the current instruction; ctx->instret itself
 * is brought up to date at basic-block ends). */
uint64_t rru_hart_instret(const rru_hart *h);
rru_mem *rru_hart_mem(const rru_hart *h);
/* Moves H to MEM (another process's address space): its translations,
 * decoded blocks and reservation are dropped when MEM is not its memory. */
void rru_hart_set_mem(rru_hart *h, rru_mem *mem);

/* Environment callbacks (ops may be NULL). ops must outlive the hart. */
void rru_hart_set_env(rru_hart *h, const rru_env_ops *ops, void *env);

/* Runs the loaded context for at most MAX_INSNS instructions; fills *stop
 * and returns its reason. Counting (docs/machine.md "Counting"): every
 * retired instruction, ECALL included, adds 1 to ctx->instret and to
 * stop->insns; a trapping instruction does not retire. An ECALL stops
 * execution right after it retires even when it is the MAX_INSNS-th
 * instruction (reason ECALL, not LIMIT), so executing exactly the count of a
 * chunk that ends with a syscall stops with ECALL. MAX_INSNS = 0 returns
 * LIMIT at once. Standalone harts only (machine cores run through
 * rru_machine_run). Never allocates per instruction; may allocate decoded
 * blocks (cached by pc, per hart: harts on one memory share nothing else). */
rru_stop_reason rru_hart_execute(rru_hart *h, uint64_t max_insns, rru_stop *stop);

/* Asks a hart to stop with RRU_STOP_REQUEST at the end of its current basic
 * block (from a callback on the executing thread). */
void rru_hart_request_stop(rru_hart *h);

/* With ON set, every F/D operation goes through the software IEEE-754
 * path (rru/softfp.c), never the host-FPU fast path (rru/fastfp.c). Results
 * and flags are the same either way; for tests and measurements. */
void rru_hart_set_softfp_only(rru_hart *h, int on);

/* Drops every decoded instruction of this hart (fence.i does this too). */
void rru_hart_flush_code(rru_hart *h);

/* ---- decoding (for tools and tests) ---- */

/* Writes a one-line disassembly of the instruction at the start of BITS
 * (16 or 32 bits, little-endian value) at PC into buf; returns its length
 * in bytes (2 or 4), or 0 if it is not a valid instruction ("illegal" is
 * written then). */
int rru_disasm(uint32_t bits, uint64_t pc, char *buf, size_t len);

/* The data access of the instruction BITS (at the start, 16 or 32 bits)
 * when C's registers are the ones it will execute with: 0 for none, else
 * RRU_ACCESS_READ, RRU_ACCESS_WRITE or both (AMOs), with the address and
 * size in bytes. For a debugger's watchpoints; an SC counts as a write. */
enum { RRU_ACCESS_READ = 1, RRU_ACCESS_WRITE = 2 };
int rru_insn_access(uint32_t bits, const rru_ctx *c, uint64_t *addr, unsigned *size);

#endif
