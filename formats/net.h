/* formats/net.h: the TCP ends of rnr's network front ends (the gdb server,
 * `rnr record --stream`, `rnr follow --listen`): an address given as
 * [HOST:]PORT, a listening socket, a connected one. HOST may be a name, an
 * IPv4 address or a bracketed IPv6 one; every listener defaults to
 * 127.0.0.1, so nothing is reachable from elsewhere unless asked. */
#ifndef RNR_FORMATS_NET_H
#define RNR_FORMATS_NET_H

#include <stddef.h>

#define RNR_NET_HOST_MAX 256u
#define RNR_NET_LOOPBACK "127.0.0.1"

/* Splits SPEC, "[HOST:]PORT", into HOST (RNR_NET_HOST_MAX bytes; brackets
 * of an IPv6 address taken off) and *PORT (decimal, 0 to 65535). Without a
 * HOST part HOST is DEFAULT_HOST, or, if that is NULL, SPEC is refused. 0,
 * or -1 with a message naming SPEC in ERR. */
int rnr_net_split(const char *spec, const char *default_host, char *host, unsigned *port, char *err,
                  size_t errlen);

/* A socket (close-on-exec) listening on HOST:PORT for one connection at a
 * time; PORT 0 takes a free one. *BOUND (if not NULL) gets the port bound.
 * The first of HOST's addresses that binds is used. -1 with the reason in
 * ERR ("HOST:PORT: reason"). */
int rnr_net_listen(const char *host, unsigned port, unsigned *bound, char *err, size_t errlen);

/* A socket (close-on-exec) connected to HOST:PORT, trying each of HOST's
 * addresses; SNDBUF > 0 sets its send buffer (bytes) before connecting.
 * -1 with the reason in ERR. */
int rnr_net_connect(const char *host, unsigned port, int sndbuf, char *err, size_t errlen);

#endif
