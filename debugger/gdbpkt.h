/* debugger/gdbpkt.h: the gdb remote serial protocol's framing and the
 * commands a replay server understands, parsed into plain structs. No I/O
 * and no replay here: bytes in, commands out, so that the parser can be
 * fuzzed alone (tests/fuzz/fuzz_gdbpkt.c). */
#ifndef RNR_DEBUGGER_GDBPKT_H
#define RNR_DEBUGGER_GDBPKT_H

#include <stddef.h>
#include <stdint.h>

#define GDB_PKT_MAX 16384u          /* the PacketSize we announce */

/* Receiving: one byte at a time. */
typedef struct gdb_rx {
    int state;                      /* 0 between packets, 1 body, 2/3 checksum digits */
    int esc;                        /* the previous body byte was '}' */
    int overflow;                   /* the body was longer than GDB_PKT_MAX */
    uint8_t sum, want;
    size_t n;
    char buf[GDB_PKT_MAX + 1];      /* the body, unescaped, NUL-terminated */
} gdb_rx;

enum {
    GDB_RX_NONE = 0,                /* need more bytes */
    GDB_RX_PACKET,                  /* a packet in rx->buf[0..n) (overflow: too long) */
    GDB_RX_BADSUM,                  /* a packet with a wrong checksum: answer '-' */
    GDB_RX_ACK,                     /* '+' */
    GDB_RX_NAK,                     /* '-': resend */
    GDB_RX_INTERRUPT,               /* 0x03 */
};

void gdb_rx_init(gdb_rx *rx);
int gdb_rx_byte(gdb_rx *rx, uint8_t b);

/* Sending: "$BODY#xx" of BODY (escaped where needed) in OUT (at least
 * 2 * n + 5 bytes); its length. */
size_t gdb_frame(const char *body, size_t n, char *out);

typedef enum gdb_cmd_kind {
    GDB_UNKNOWN = 0,        /* answered with an empty packet */
    GDB_BAD,                /* malformed: answered E01 */
    GDB_HALT_REASON,        /* ? */
    GDB_READ_REGS,          /* g */
    GDB_READ_REG,           /* p REG */
    GDB_WRITE,              /* G, P, M, X: a replay refuses them */
    GDB_READ_MEM,           /* m ADDR,LEN */
    GDB_RESUME,             /* c, s, C, S, vCont;...: step (tid or 0 = the current) or continue */
    GDB_REVERSE,            /* bc, bs */
    GDB_VCONT_QUERY,        /* vCont? */
    GDB_Z_INSERT,           /* Z TYPE,ADDR,KIND */
    GDB_Z_REMOVE,           /* z TYPE,ADDR,KIND */
    GDB_SET_THREAD,         /* H op TID */
    GDB_THREAD_ALIVE,       /* T TID */
    GDB_SUPPORTED,          /* qSupported */
    GDB_XFER_FEATURES,      /* qXfer:features:read:ANNEX:OFF,LEN */
    GDB_THREADS_FIRST,      /* qfThreadInfo */
    GDB_THREADS_NEXT,       /* qsThreadInfo */
    GDB_CURRENT_THREAD,     /* qC */
    GDB_THREAD_EXTRA,       /* qThreadExtraInfo,TID */
    GDB_MONITOR,            /* qRcmd,HEX: text decoded */
    GDB_NO_ACK,             /* QStartNoAckMode */
    GDB_ATTACHED,           /* qAttached */
    GDB_DETACH,             /* D */
    GDB_KILL,               /* k, vKill */
} gdb_cmd_kind;

typedef struct gdb_cmd {
    gdb_cmd_kind kind;
    int step;               /* RESUME / REVERSE: 1 step, 0 continue; SUPPORTED: gdb takes exec events */
    int others;             /* RESUME: threads without an action of their own move too
                             * (vCont;s:T;c); else only TID moves (vCont;c:T, s, vCont;s:T) */
    int64_t tid;            /* RESUME step's thread (0: current), H/T/qThreadExtraInfo: -1 all, 0 any */
    char op;                /* H: 'g' or 'c' */
    uint64_t addr, len;     /* m, qXfer (offset, length), Z (address, kind) */
    unsigned type;          /* Z: 0..4; p: the register number */
    char annex[64];         /* qXfer */
    char text[512];         /* qRcmd, decoded; GDB_WRITE/GDB_BAD: what it was */
} gdb_cmd;

/* Parses packet body P (N bytes). Never fails: unknown packets are
 * GDB_UNKNOWN and malformed known ones GDB_BAD. */
void gdb_parse(const char *p, size_t n, gdb_cmd *c);

/* Hex helpers: "%02x" of each byte of DATA in OUT (2 * n + 1 bytes). */
void gdb_hex(const void *data, size_t n, char *out);

#endif
