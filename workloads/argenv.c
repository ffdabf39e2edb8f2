/* workloads/argenv.c: prints its arguments and the environment variables
 * whose names start with RNRTEST_, and exits with the status given by
 * RNRTEST_EXIT (default 0). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

int main(int argc, char **argv)
{
    printf("argc %d\n", argc);
    for (int i = 1; i < argc; i++)
        printf("argv[%d] '%s' (%zu)\n", i, argv[i], strlen(argv[i]));
    printf("argv[argc] %s\n", argv[argc] ? "set" : "NULL");
    int n = 0;
    for (char **e = environ; *e; e++)
        if (strncmp(*e, "RNRTEST_", 8) == 0)
            printf("env %d '%s'\n", n++, *e);
    const char *v = getenv("RNRTEST_EXIT");
    printf("getenv(RNRTEST_MISSING) %s\n", getenv("RNRTEST_MISSING") ? "set" : "NULL");
    fflush(stdout);
    return v ? atoi(v) : 0;
}
