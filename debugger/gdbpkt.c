/* debugger/gdbpkt.c: gdb remote protocol framing and command parsing
 * (debugger/gdbpkt.h). */
#include "debugger/gdbpkt.h"

#include <stdio.h>
#include <string.h>

void gdb_rx_init(gdb_rx *rx) { memset(rx, 0, sizeof *rx); }

static int hexval(int ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

int gdb_rx_byte(gdb_rx *rx, uint8_t b)
{
    switch (rx->state) {
    case 0:
        if (b == '$') {
            rx->state = 1;
            rx->n = 0;
            rx->sum = 0;
            rx->esc = 0;
            rx->overflow = 0;
            return GDB_RX_NONE;
        }
        if (b == '+')
            return GDB_RX_ACK;
        if (b == '-')
            return GDB_RX_NAK;
        if (b == 3)
            return GDB_RX_INTERRUPT;
        return GDB_RX_NONE;          /* noise between packets */
    case 1:
        if (b == '#' && !rx->esc) {
            rx->state = 2;
            return GDB_RX_NONE;
        }
        if (b == '$' && !rx->esc) {  /* a new packet: the old one was cut */
            rx->n = 0;
            rx->sum = 0;
            rx->overflow = 0;
            return GDB_RX_NONE;
        }
        rx->sum = (uint8_t)(rx->sum + b);
        if (b == '}' && !rx->esc) {
            rx->esc = 1;
            return GDB_RX_NONE;
        }
        if (rx->esc) {
            b ^= 0x20;
            rx->esc = 0;
        }
        if (rx->n < GDB_PKT_MAX)
            rx->buf[rx->n++] = (char)b;
        else
            rx->overflow = 1;
        return GDB_RX_NONE;
    case 2:
    case 3: {
        int v = hexval(b);
        if (v < 0) {
            rx->state = 0;
            return GDB_RX_BADSUM;
        }
        if (rx->state == 2) {
            rx->want = (uint8_t)(v << 4);
            rx->state = 3;
            return GDB_RX_NONE;
        }
        rx->want |= (uint8_t)v;
        rx->state = 0;
        rx->buf[rx->n] = 0;
        return rx->want == rx->sum ? GDB_RX_PACKET : GDB_RX_BADSUM;
    }
    }
    rx->state = 0;
    return GDB_RX_NONE;
}

size_t gdb_frame(const char *body, size_t n, char *out)
{
    static const char hex[] = "0123456789abcdef";
    size_t k = 0;
    uint8_t sum = 0;
    out[k++] = '$';
    for (size_t i = 0; i < n; i++) {
        uint8_t b = (uint8_t)body[i];
        if (b == '$' || b == '#' || b == '}' || b == '*') {
            out[k++] = '}';
            sum = (uint8_t)(sum + '}');
            b ^= 0x20;
        }
        out[k++] = (char)b;
        sum = (uint8_t)(sum + b);
    }
    out[k++] = '#';
    out[k++] = hex[sum >> 4];
    out[k++] = hex[sum & 15];
    out[k] = 0;
    return k;
}

void gdb_hex(const void *data, size_t n, char *out)
{
    static const char hex[] = "0123456789abcdef";
    const uint8_t *p = data;
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = hex[p[i] >> 4];
        out[2 * i + 1] = hex[p[i] & 15];
    }
    out[2 * n] = 0;
}

/* ---- parsing ---- */

/* A hex number at *P (at least one digit, at most 16): 0 and *P moved past
 * it, or -1. */
static int num(const char **p, const char *end, uint64_t *v)
{
    const char *s = *p;
    uint64_t x = 0;
    int digits = 0;
    while (s < end && hexval((unsigned char)*s) >= 0) {
        if (++digits > 16)
            return -1;
        x = x << 4 | (uint64_t)hexval((unsigned char)*s++);
    }
    if (!digits)
        return -1;
    *p = s;
    *v = x;
    return 0;
}

/* A thread id: hex, "-1" (all) or "0" (any). */
static int thread_id(const char **p, const char *end, int64_t *tid)
{
    uint64_t v;
    if (end - *p >= 2 && (*p)[0] == '-' && (*p)[1] == '1') {
        *p += 2;
        *tid = -1;
        return 0;
    }
    if (num(p, end, &v) < 0 || v > 0x7fffffff)
        return -1;
    *tid = (int64_t)v;
    return 0;
}

static int starts(const char *p, const char *end, const char *word)
{
    size_t n = strlen(word);
    return (size_t)(end - p) >= n && memcmp(p, word, n) == 0;
}

static void bad(gdb_cmd *c, const char *p, size_t n)
{
    c->kind = GDB_BAD;
    snprintf(c->text, sizeof c->text, "%.*s", (int)(n > 40 ? 40 : n), p);
}

/* vCont;ACTION[:TID][;ACTION[:TID]]...: in all-stop mode one thread moves
 * at a time here: a step action (for its thread or all) makes the whole
 * request a step of that thread, else it is a continue. */
static void parse_vcont(const char *p, const char *end, gdb_cmd *c)
{
    const char *s = p;
    c->kind = GDB_RESUME;
    c->step = 0;
    c->tid = 0;
    int actions = 0;
    while (s < end) {
        if (*s != ';')
            goto fail;
        s++;
        if (s >= end)
            goto fail;
        char a = *s++;
        uint64_t sig;
        if (a == 'C' || a == 'S') {
            if (num(&s, end, &sig) < 0)
                goto fail;
            a = (char)(a == 'C' ? 'c' : 's');
        } else if (a != 'c' && a != 's') {
            goto fail;
        }
        int64_t tid = 0;
        if (s < end && *s == ':') {
            s++;
            if (thread_id(&s, end, &tid) < 0)
                goto fail;
        }
        if (tid <= 0)
            c->others = 1;          /* an action for every thread without one */
        if (a == 's' && !c->step) {
            c->step = 1;
            c->tid = tid > 0 ? tid : 0;
        } else if (a == 'c' && tid > 0 && !c->step && !c->tid) {
            c->tid = tid;
        }
        actions++;
    }
    if (actions)
        return;
fail:
    bad(c, p - 5, (size_t)(end - p) + 5);
}

void gdb_parse(const char *p, size_t n, gdb_cmd *c)
{
    memset(c, 0, sizeof *c);
    const char *end = p + n, *s = p + 1;
    uint64_t a, b, t;
    if (n == 0) {
        c->kind = GDB_UNKNOWN;
        return;
    }
    switch (p[0]) {
    case '?':
        if (n != 1)
            break;
        c->kind = GDB_HALT_REASON;
        return;
    case 'g':
        if (n != 1)
            break;
        c->kind = GDB_READ_REGS;
        return;
    case 'p':
        if (num(&s, end, &a) < 0 || s != end || a > 4096)
            break;
        c->kind = GDB_READ_REG;
        c->type = (unsigned)a;
        return;
    case 'G': case 'P': case 'M': case 'X':
        c->kind = GDB_WRITE;
        snprintf(c->text, sizeof c->text, "%c", p[0]);
        return;
    case 'm':
        if (num(&s, end, &a) < 0 || s >= end || *s++ != ',' || num(&s, end, &b) < 0 || s != end)
            break;
        c->kind = GDB_READ_MEM;
        c->addr = a;
        c->len = b;
        return;
    case 'c': case 's':
        /* An address to resume at is something a replay cannot do. */
        if (n != 1)
            break;
        c->kind = GDB_RESUME;
        c->step = p[0] == 's';
        c->others = !c->step;
        return;
    case 'C': case 'S':
        if (num(&s, end, &a) < 0 || (s != end && *s != ';'))
            break;
        if (s != end)
            break;
        c->kind = GDB_RESUME;
        c->step = p[0] == 'S';
        c->others = !c->step;
        return;
    case 'b':
        if (n == 2 && (p[1] == 'c' || p[1] == 's')) {
            c->kind = GDB_REVERSE;
            c->step = p[1] == 's';
            return;
        }
        break;
    case 'Z': case 'z':
        if (num(&s, end, &t) < 0 || t > 4 || s >= end || *s++ != ',' || num(&s, end, &a) < 0 ||
            s >= end || *s++ != ',' || num(&s, end, &b) < 0)
            break;
        /* Conditions and commands after ';' are gdb's to evaluate: not
         * announced, so not expected, and ignored if sent. */
        if (s != end && *s != ';')
            break;
        c->kind = p[0] == 'Z' ? GDB_Z_INSERT : GDB_Z_REMOVE;
        c->type = (unsigned)t;
        c->addr = a;
        c->len = b;
        return;
    case 'H':
        if (n < 3 || (p[1] != 'g' && p[1] != 'c'))
            break;
        s = p + 2;
        if (thread_id(&s, end, &c->tid) < 0 || s != end)
            break;
        c->kind = GDB_SET_THREAD;
        c->op = p[1];
        return;
    case 'T':
        if (thread_id(&s, end, &c->tid) < 0 || s != end)
            break;
        c->kind = GDB_THREAD_ALIVE;
        return;
    case 'D':
        c->kind = GDB_DETACH;
        return;
    case 'k':
        c->kind = GDB_KILL;
        return;
    case 'v':
        if (starts(p, end, "vCont?") && n == 6) {
            c->kind = GDB_VCONT_QUERY;
            return;
        }
        if (starts(p, end, "vCont;") || (starts(p, end, "vCont") && n == 5)) {
            parse_vcont(p + 5, end, c);
            return;
        }
        if (starts(p, end, "vKill")) {
            c->kind = GDB_KILL;
            return;
        }
        c->kind = GDB_UNKNOWN;
        return;
    case 'q':
    case 'Q':
        if (starts(p, end, "qSupported")) {
            c->kind = GDB_SUPPORTED;
            /* The one feature of gdb's the server uses. */
            static const char ev[] = "exec-events+";
            for (const char *q = p; q + sizeof ev - 1 <= end; q++)
                if (memcmp(q, ev, sizeof ev - 1) == 0)
                    c->step = 1;
            return;
        }
        if (starts(p, end, "qfThreadInfo") && n == 12) {
            c->kind = GDB_THREADS_FIRST;
            return;
        }
        if (starts(p, end, "qsThreadInfo") && n == 12) {
            c->kind = GDB_THREADS_NEXT;
            return;
        }
        if (n == 2 && p[1] == 'C') {
            c->kind = GDB_CURRENT_THREAD;
            return;
        }
        if (starts(p, end, "qAttached")) {
            c->kind = GDB_ATTACHED;
            return;
        }
        if (starts(p, end, "QStartNoAckMode") && n == 15) {
            c->kind = GDB_NO_ACK;
            return;
        }
        if (starts(p, end, "qThreadExtraInfo,")) {
            s = p + 17;
            if (thread_id(&s, end, &c->tid) < 0 || s != end)
                break;
            c->kind = GDB_THREAD_EXTRA;
            return;
        }
        if (starts(p, end, "qRcmd,")) {
            s = p + 6;
            size_t k = 0;
            if ((end - s) % 2)
                break;
            for (; s < end; s += 2) {
                int hi = hexval((unsigned char)s[0]), lo = hexval((unsigned char)s[1]);
                if (hi < 0 || lo < 0 || k + 1 >= sizeof c->text)
                    goto malformed;
                c->text[k++] = (char)(hi << 4 | lo);
            }
            c->text[k] = 0;
            if (strlen(c->text) != k)
                break;              /* a NUL inside */
            c->kind = GDB_MONITOR;
            return;
        }
        if (starts(p, end, "qXfer:features:read:")) {
            s = p + 20;
            const char *colon = memchr(s, ':', (size_t)(end - s));
            if (!colon || (size_t)(colon - s) >= sizeof c->annex)
                break;
            memcpy(c->annex, s, (size_t)(colon - s));
            c->annex[colon - s] = 0;
            s = colon + 1;
            if (num(&s, end, &a) < 0 || s >= end || *s++ != ',' || num(&s, end, &b) < 0 || s != end)
                break;
            c->kind = GDB_XFER_FEATURES;
            c->addr = a;
            c->len = b;
            return;
        }
        c->kind = GDB_UNKNOWN;
        return;
    default:
        c->kind = GDB_UNKNOWN;
        return;
    }
malformed:
    bad(c, p, n);
}
