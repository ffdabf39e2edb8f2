/* replayer/exec.h: what a replay executes: the recording bundle opened
 * (manifest, program checked against its SHA-256, input log), the
 * recorded process rebuilt by the driver (driver/replay.h), and chunks run
 * on per-worker harts: exactly CS instructions of a thread, its system
 * calls, CSR reads and SC outcomes fed from its input records, its
 * recorded chunk checks compared where a chunk ends. At the end the
 * replay's stdout, exit status, per-thread instruction counts and final
 * state digest are compared with the recording's. */
#ifndef RNR_REPLAYER_EXEC_H
#define RNR_REPLAYER_EXEC_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "formats/io.h"
#include "formats/manifest.h"
#include "rru/hart.h"

typedef struct rp_exec rp_exec;

typedef struct rp_exec_options {
    unsigned workers;          /* harts (one per worker thread), >= 1 */
    const char *program;       /* NULL: the bundle's copy, else the recorded path */
    FILE *out;                 /* the guest's stdout as the recording printed it; NULL: none */
    /* A stream's replay: the programs execve loaded, as they come
     * (drv_config.exec_image); NULL: the manifest's list only. */
    int (*exec_image)(void *ctx, size_t index, char *path, size_t pathlen, char *sha256, char *err,
                      size_t errlen);
    void *exec_ctx;
} rp_exec_options;

/* Opens bundle DIR. NULL with one line in err: exit status 2 (*bad_program
 * set when the program is not the recorded one). */
rp_exec *rp_exec_open(const char *dir, const rp_exec_options *o, char *err, size_t errlen);
void rp_exec_free(rp_exec *x);
/* A replay of a recording still being made (the on-line follower,
 * docs/online.md): M is the manifest's fixed part (program, arguments,
 * environment, configuration), PROGRAM the program received (checked
 * against M's SHA-256), and the input log is read through cursors that
 * OPEN_INPUT makes (each a new reader of the log from its start, whose
 * reads wait for bytes still to come and end when the stream does). The
 * replay's output is kept and compared by rp_exec_finish_stream. At most
 * RP_STREAM_THREADS threads. NULL with one line in err. */
struct rnr_manifest;
typedef rnr_io *(*rp_io_open_fn)(void *ctx);
#define RP_STREAM_THREADS 65536u
rp_exec *rp_exec_open_stream(const struct rnr_manifest *m, const char *program,
                             rp_io_open_fn open_input, void *ctx, const rp_exec_options *o,
                             char *err, size_t errlen);
/* Opens the bundle's final log of KIND after checking it against the
 * manifest's digest, then ends the bundle's shared lock. NULL with one line
 * in err (exit status 2). */
struct rnr_reader *rp_exec_open_log(rp_exec *x, uint32_t kind, char *err, size_t errlen);
unsigned rp_exec_cpus(const rp_exec *x);        /* recorded CPUs */
const char *rp_exec_dir(const rp_exec *x);    /* the bundle ("latest" resolved) */
const char *rp_exec_program(const rp_exec *x);  /* the program file replayed (for a debugger) */
uint64_t rp_exec_instructions(const rp_exec *x);/* recorded instructions, all threads */

/* Runs chunk SEQ (for messages: CPU, LANE_INDEX) of thread TID, CS
 * instructions, on worker W's hart. Thread-safe across workers as long as
 * no two run chunks of one thread at once (the log's order guarantees it).
 * 0, or -1 with a message naming the first difference (CPU, chunk, TID,
 * PC, expected vs found). */
int rp_exec_chunk(rp_exec *x, unsigned w, uint32_t cpu, uint64_t lane_index, uint32_t tid,
                  uint64_t cs, char *msg, size_t msglen);

/* The same in steps, for a debugger (one worker, the caller's thread):
 * rp_exec_begin loads chunk SEQ's thread on worker W's hart (0, or -1
 * with the message); rp_exec_run executes at most N more of its
 * instructions: 1 = some are left, 0 = the chunk is done (its check
 * compared), -1 = diverged (message), 2 = stopped at an EBREAK
 * (rp_exec_ebreak_stops), 3 = stopped after an execve (rp_exec_exec_stops). Between calls the hart holds the
 * thread's live registers (rp_exec_live). rp_exec_chunk is begin + run. */
int rp_exec_begin(rp_exec *x, unsigned w, uint32_t cpu, uint64_t lane_index, uint32_t tid,
                  uint64_t cs, char *msg, size_t msglen);
int rp_exec_run(rp_exec *x, unsigned w, uint64_t n, char *msg, size_t msglen);
/* With ON, rp_exec_run returns 2 when the thread reaches an EBREAK (not
 * executed; the hart stands at it) instead of failing: a debugger's
 * breakpoints written into guest memory. Off by default. */
void rp_exec_ebreak_stops(rp_exec *x, unsigned w, int on);
/* With ON, rp_exec_run returns 3 right after an execve replaced the
 * program (the hart stands at the new program's first instruction; the
 * old program's memory, and any EBREAK written into it, is gone). */
void rp_exec_exec_stops(rp_exec *x, unsigned w, int on);
/* Instructions of worker W's chunk not executed yet (0: none in progress). */
uint64_t rp_exec_left(const rp_exec *x, unsigned w);
/* The live registers of worker W's chunk in progress (its thread in *TID),
 * or NULL; rp_exec_live_instret: that thread's exact retired count. */
rru_ctx *rp_exec_live(rp_exec *x, unsigned w, uint32_t *tid);
uint64_t rp_exec_live_instret(const rp_exec *x, unsigned w);
/* Thread TID's registers: live when a worker runs its chunk, else saved;
 * NULL for a thread not created yet or ended. Not to be changed. */
rru_ctx *rp_exec_thread(rp_exec *x, uint32_t tid);
rru_mem *rp_exec_mem(rp_exec *x);
/* The recording's manifest (NULL for a stream's replay). */
const rnr_manifest *rp_exec_manifest(const rp_exec *x);
/* From now on the guest's output goes to OUT (NULL: nowhere); it is still
 * compared with the recording's. */
void rp_exec_print_to(rp_exec *x, FILE *out);
struct drv_proc *rp_exec_proc(rp_exec *x);

/* After the last chunk: 0 if stdout bytes, exit status, per-thread
 * instruction counts and the final digest equal the recording's; 1 with
 * the first difference in msg. */
int rp_exec_finish(rp_exec *x, char *msg, size_t msglen);
/* The same for a stream's replay: FINAL is the recording's final manifest,
 * the paths the recorded stdout and stderr as received. */
int rp_exec_finish_stream(rp_exec *x, const struct rnr_manifest *final, const char *stdout_path,
                          const char *stderr_path, char *msg, size_t msglen);

#endif
