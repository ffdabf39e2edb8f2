/* workloads/filewrite.c: creates FILE, writes numbered lines into it with
 * stdio and write(2), appends with O_APPEND, reads it back and prints it;
 * prints the errno text when the file cannot be created (exit 1). With
 * "fs", then also makes a directory FILE.d, renames FILE into it (and
 * fails to rename onto an existing name with RENAME_NOREPLACE), truncates
 * it, syncs it, reads it back, and removes both: what is left is what was
 * there before. With "change" it only tries to remove FILE, make the
 * directory FILE.d and rename FILE to FILE.x, printing what each gives.
 * Usage: filewrite FILE [LINES [fs|change]] (default 5 lines). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *rc(int r) { return r == 0 ? "0" : strerror(errno); }

static int fs_calls(const char *file)
{
    char dir[4096], moved[4200], other[4200];
    snprintf(dir, sizeof dir, "%s.d", file);
    snprintf(moved, sizeof moved, "%s/moved", dir);
    snprintf(other, sizeof other, "%s/other", dir);
    printf("mkdir %s\n", rc(mkdir(dir, 0755)));
    printf("mkdir again %s\n", rc(mkdir(dir, 0755)));
    printf("rename into it %s\n", rc(rename(file, moved)));
    printf("old name gone %d\n", access(file, F_OK) != 0);
    int fd = open(other, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    printf("create other %d\n", fd >= 0);
    printf("fsync %s fdatasync %s\n", rc(fsync(fd)), rc(fdatasync(fd)));
    close(fd);
    printf("noreplace %s\n", rc(renameat2(AT_FDCWD, moved, AT_FDCWD, other, RENAME_NOREPLACE)));
    fd = open(moved, O_RDWR);
    printf("ftruncate 7 %s\n", rc(ftruncate(fd, 7)));
    printf("ftruncate negative %s\n", rc(ftruncate(fd, -1)));
    struct stat st;
    printf("size %lld\n", fstat(fd, &st) == 0 ? (long long)st.st_size : -1LL);
    char buf[16] = {0};
    printf("read back %zd '%s'\n", pread(fd, buf, sizeof buf - 1, 0), buf);
    close(fd);
    fd = open(other, O_RDONLY);
    printf("ftruncate read-only %s\n", rc(ftruncate(fd, 0)));
    close(fd);
    printf("fsync closed %s\n", rc(fsync(fd)));
    printf("rmdir non-empty %d\n", rmdir(dir) != 0);
    printf("unlink dir %d\n", unlink(dir) != 0);
    printf("unlink %s %s\n", rc(unlink(moved)), rc(unlink(other)));
    printf("unlink missing %s\n", rc(unlink(moved)));
    printf("rmdir %s\n", rc(rmdir(dir)));
    printf("gone %d\n", access(dir, F_OK) != 0);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: filewrite FILE [LINES]\n");
        return 2;
    }
    int lines = argc > 2 ? atoi(argv[2]) : 5;
    if (argc > 3 && strcmp(argv[3], "change") == 0) {
        char dir[4096], renamed[4096];
        snprintf(dir, sizeof dir, "%s.d", argv[1]);
        snprintf(renamed, sizeof renamed, "%s.x", argv[1]);
        printf("unlink %s\n", rc(unlink(argv[1])));
        printf("mkdir %s\n", rc(mkdir(dir, 0755)));
        printf("rename %s\n", rc(rename(argv[1], renamed)));
        return 0;
    }
    FILE *f = fopen(argv[1], "w");
    if (!f) {
        printf("cannot create %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    for (int i = 0; i < lines; i++)
        fprintf(f, "line %d\n", i);
    fclose(f);
    int fd = open(argv[1], O_WRONLY | O_APPEND);
    if (fd < 0 || write(fd, "appended\n", 9) != 9) {
        printf("cannot append: %s\n", strerror(errno));
        return 1;
    }
    close(fd);
    f = fopen(argv[1], "r");
    char buf[256];
    while (f && fgets(buf, sizeof buf, f))
        fputs(buf, stdout);
    if (f)
        fclose(f);
    if (argc > 3 && strcmp(argv[3], "fs") == 0)
        return fs_calls(argv[1]);
    return 0;
}
