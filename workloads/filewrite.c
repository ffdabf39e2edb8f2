/* workloads/filewrite.c: creates FILE, writes numbered lines into it with
 * stdio and write(2), appends with O_APPEND, reads it back and prints it;
 * prints the errno text when the file cannot be created (exit 1).
 * Usage: filewrite FILE [LINES] (default 5). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: filewrite FILE [LINES]\n");
        return 2;
    }
    int lines = argc > 2 ? atoi(argv[2]) : 5;
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
    return 0;
}
