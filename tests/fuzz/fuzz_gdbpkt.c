/* tests/fuzz/fuzz_gdbpkt.c: the gdb remote protocol's framing and command
 * parser (debugger/gdbpkt.c) on any bytes: the bytes as a stream from gdb
 * (every packet it yields parsed), and as one packet body; a body framed
 * by gdb_frame must come back whole through the receiver. */
#include <stdlib.h>
#include <string.h>

#include "debugger/gdbpkt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static gdb_rx rx, rx2;
static char framed[2 * GDB_PKT_MAX + 8];

static void roundtrip(const char *body, size_t n)
{
    if (n > GDB_PKT_MAX)
        return;
    size_t k = gdb_frame(body, n, framed);
    gdb_rx_init(&rx2);
    int ev = GDB_RX_NONE;
    for (size_t i = 0; i < k; i++) {
        ev = gdb_rx_byte(&rx2, (uint8_t)framed[i]);
        if (ev != GDB_RX_NONE && i + 1 < k)
            abort();            /* a packet ended inside its own frame */
    }
    if (ev != GDB_RX_PACKET || rx2.n != n || memcmp(rx2.buf, body, n) != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gdb_cmd c;
    gdb_rx_init(&rx);
    for (size_t i = 0; i < size; i++)
        if (gdb_rx_byte(&rx, data[i]) == GDB_RX_PACKET && !rx.overflow) {
            gdb_parse(rx.buf, rx.n, &c);
            roundtrip(rx.buf, rx.n);
        }
    gdb_parse((const char *)data, size, &c);
    roundtrip((const char *)data, size);
    return 0;
}
