/* workloads/fileio.c: reads the file named on the command line with stdio
 * and with open/read/lseek/pread, counts lines, words and bytes, prints a
 * checksum; also reports how a missing file fails.
 * Usage: fileio FILE [MISSING_FILE] */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: fileio FILE [MISSING_FILE]\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "r");
    if (!f) {
        printf("cannot open %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    uint64_t lines = 0, words = 0, bytes = 0, sum = 0;
    int c, inword = 0;
    while ((c = getc(f)) != EOF) {
        bytes++;
        sum = sum * 131 + (unsigned char)c;
        lines += c == '\n';
        int space = c == ' ' || c == '\n' || c == '\t';
        words += !space && !inword;
        inword = !space;
    }
    fclose(f);
    printf("lines %" PRIu64 " words %" PRIu64 " bytes %" PRIu64 " sum %016" PRIx64 "\n", lines,
           words, bytes, sum);

    int fd = open(argv[1], O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0)
        return 1;
    printf("fstat size %lld regular %d\n", (long long)st.st_size, S_ISREG(st.st_mode));
    char buf[16];
    off_t end = lseek(fd, 0, SEEK_END);
    ssize_t n = pread(fd, buf, sizeof buf - 1, end / 2);
    buf[n > 0 ? n : 0] = 0;
    for (ssize_t i = 0; i < n; i++)
        if (buf[i] < 32 || buf[i] > 126)
            buf[i] = '.';
    printf("end %lld middle '%s'\n", (long long)end, buf);
    lseek(fd, 0, SEEK_SET);
    ssize_t r = read(fd, buf, 4);
    printf("read %zd at start, then at %lld\n", r, (long long)lseek(fd, 0, SEEK_CUR));
    close(fd);
    printf("read closed fd: %zd %s\n", read(fd, buf, 1), strerror(errno));

    if (argc > 2) {
        errno = 0;
        int m = open(argv[2], O_RDONLY);
        printf("open missing: %d %s\n", m, strerror(errno));
    }
    return 0;
}
