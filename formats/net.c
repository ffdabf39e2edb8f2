/* formats/net.c: [HOST:]PORT addresses and TCP sockets (formats/net.h). */
#include "formats/net.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int rnr_net_split(const char *spec, const char *default_host, char *host, unsigned *port, char *err,
                  size_t errlen)
{
    const char *colon = strrchr(spec, ':');
    const char *ps = colon ? colon + 1 : spec;
    if (colon) {
        const char *h = spec;
        size_t n = (size_t)(colon - spec);
        if (n >= 2 && h[0] == '[' && h[n - 1] == ']') {
            h++;
            n -= 2;
        }
        if (n == 0) {
            snprintf(err, errlen, "'%s': the host before ':' is empty", spec);
            return -1;
        }
        if (n >= RNR_NET_HOST_MAX) {
            snprintf(err, errlen, "'%s': the host name is too long", spec);
            return -1;
        }
        memcpy(host, h, n);
        host[n] = 0;
    } else if (default_host) {
        snprintf(host, RNR_NET_HOST_MAX, "%s", default_host);
    } else {
        snprintf(err, errlen, "'%s': not HOST:PORT", spec);
        return -1;
    }
    char *end;
    errno = 0;
    unsigned long v = strtoul(ps, &end, 10);
    if (ps[0] < '0' || ps[0] > '9' || *end || errno || v > 65535) {
        snprintf(err, errlen, "'%s': '%s' is not a port number (0 to 65535)", spec, ps);
        return -1;
    }
    *port = (unsigned)v;
    return 0;
}

/* HOST's stream-socket addresses for PORT, or NULL with ERR. */
static struct addrinfo *resolve(const char *host, unsigned port, int passive, char *err, size_t errlen)
{
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0);
    char ps[16];
    snprintf(ps, sizeof ps, "%u", port);
    int rc = getaddrinfo(host, ps, &hints, &res);
    if (rc != 0) {
        snprintf(err, errlen, "%s: %s", host, gai_strerror(rc));
        return NULL;
    }
    return res;
}

/* The first of HOST's addresses on which a socket listens (LISTENING) or
 * connects; SNDBUF > 0 sets a connecting socket's send buffer first. */
static int open_socket(const char *host, unsigned port, int listening, int sndbuf, char *err,
                       size_t errlen)
{
    struct addrinfo *res = resolve(host, port, listening, err, errlen);
    if (!res)
        return -1;
    int fd = -1, e = 0;
    for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            e = errno;
            continue;
        }
        int one = 1, ok;
        if (listening) {
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
            ok = bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, 1) == 0;
        } else {
            if (sndbuf > 0)
                setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
            ok = connect(fd, a->ai_addr, a->ai_addrlen) == 0;
        }
        if (!ok) {
            e = errno;
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd < 0)
        snprintf(err, errlen, "%s:%u: %s", host, port, strerror(e));
    return fd;
}

int rnr_net_listen(const char *host, unsigned port, unsigned *bound, char *err, size_t errlen)
{
    int fd = open_socket(host, port, 1, 0, err, errlen);
    if (fd >= 0 && bound) {
        struct sockaddr_storage sa;
        socklen_t len = sizeof sa;
        *bound = port;
        if (getsockname(fd, (struct sockaddr *)&sa, &len) == 0)
            *bound = ntohs(sa.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&sa)->sin6_port
                                                    : ((struct sockaddr_in *)&sa)->sin_port);
    }
    return fd;
}

int rnr_net_connect(const char *host, unsigned port, int sndbuf, char *err, size_t errlen)
{
    return open_socket(host, port, 0, sndbuf, err, errlen);
}
