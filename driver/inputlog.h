/* driver/inputlog.h: the writer of a process's nondeterministic inputs
 * (an RNR_LOG_INPUT log, formats/log.h): per thread in program order, each
 * syscall's result, then the bytes it wrote into guest memory; CSR values;
 * the bytes placed at start (AT_RANDOM). docs/driver.md, "Input log". */
#ifndef RNR_DRIVER_INPUTLOG_H
#define RNR_DRIVER_INPUTLOG_H

#include <stddef.h>
#include <stdint.h>

/* Bytes of one MEM record are split at this size. */
#define INLOG_MEM_PIECE (1u << 20)

typedef struct inlog inlog;

/* Memory records a syscall produced before its result is known. */
typedef struct inlog_piece {
    uint64_t addr;
    uint64_t len;
    uint8_t *data;
} inlog_piece;
typedef struct inlog_pending {
    inlog_piece *v;
    size_t n, cap;
} inlog_pending;

/* Starts the log at PATH; NULL with "PATH: reason" in err. */
inlog *inlog_open(const char *path, unsigned cpus, const uint8_t program_sha256[32], char *err,
                  size_t errlen);
/* Appends a record; 0 or -1 (sticky; message from inlog_error). */
int inlog_syscall(inlog *l, uint32_t tid, uint64_t nr, int64_t value);
int inlog_mem(inlog *l, uint32_t tid, uint64_t addr, const void *data, uint64_t len);
int inlog_csr(inlog *l, uint32_t tid, uint32_t csr, uint64_t value);
int inlog_start(inlog *l, uint32_t tid, uint64_t addr, const void *data, uint64_t len);
/* A store-conditional of TID: its ordinal among the thread's SCs (from 0),
 * the value it wrote to rd (0 = success) and its address. */
int inlog_sc(inlog *l, uint32_t tid, uint64_t ordinal, uint64_t rd_value, uint64_t addr);
/* A recorded chunk of TID ended with the thread at INSTRET, PC, registers
 * hashing to HASH (rru_ctx_hash). */
int inlog_check(inlog *l, uint32_t tid, uint64_t instret, uint64_t pc, uint64_t hash);
const char *inlog_error(const inlog *l);
/* Pushes the complete records so far to the file as a block. 0 or -1. */
int inlog_flush(inlog *l);
/* Number of records written so far. */
uint64_t inlog_records(const inlog *l);
/* Ends and closes the log; 0, or -1 with the first error in err. */
int inlog_close(inlog *l, char *err, size_t errlen);

/* Copies DATA into P (aborts when out of memory). */
void inlog_pending_add(inlog_pending *p, uint64_t addr, const void *data, uint64_t len);
/* Writes P's records as MEM records of TID (if L is not NULL) and empties P. */
int inlog_pending_flush(inlog *l, uint32_t tid, inlog_pending *p);
void inlog_pending_free(inlog_pending *p);

#endif
