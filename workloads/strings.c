/* workloads/strings.c: the string functions of libc (copy, compare,
 * search, tokenise, convert, format) on known inputs.
 * Usage: strings [ROUNDS] (default 200). */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t fnv(const void *p, size_t n, uint32_t h)
{
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * 16777619u;
    return h;
}

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? strtol(argv[1], NULL, 0) : 200;
    static const char text[] =
        "The quick brown fox jumps over the lazy dog; pack my box with five dozen liquor jugs. "
        "Sphinx of black quartz, judge my vow!";
    char buf[512], tmp[512];

    printf("len %zu\n", strlen(text));
    printf("strchr '%s'\n", strchr(text, 'j'));
    printf("strrchr '%s'\n", strrchr(text, 'j'));
    printf("strstr '%.20s'\n", strstr(text, "five"));
    printf("strspn %zu strcspn %zu\n", strspn(text, "The quick"), strcspn(text, ";!"));
    printf("cmp %d %d %d\n", strcmp("abc", "abd") < 0, strncmp("abcx", "abcy", 3),
           strcasecmp("HeLLo", "hello"));

    /* Tokenise and convert. */
    strcpy(buf, "12 -7 0x1f 077 +42 9223372036854775807 -9223372036854775808 junk");
    long long sum = 0;
    char *save = NULL;
    for (char *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
        char *end;
        long long v = strtoll(t, &end, 0);
        printf("tok '%s' -> %lld%s\n", t, v, *end ? " (rest)" : "");
        sum += v / 8;
    }
    printf("sum/8 %lld\n", sum);

    /* Case mapping and reversal, many rounds, hashed. */
    uint32_t h = 2166136261u;
    size_t n = strlen(text);
    for (long r = 0; r < rounds; r++) {
        memcpy(buf, text, n + 1);
        for (size_t i = 0; i < n; i++)
            buf[i] = (char)((r & 1) ? toupper((unsigned char)buf[i]) : tolower((unsigned char)buf[i]));
        for (size_t i = 0; i < n / 2; i++) {
            char c = buf[i];
            buf[i] = buf[n - 1 - i];
            buf[n - 1 - i] = c;
        }
        memmove(buf + 3, buf, n - 3);
        int k = snprintf(tmp, sizeof tmp, "%ld:%s:%08x", r, buf + (r % 40), h);
        h = fnv(tmp, (size_t)k, h);
    }
    printf("rounds %ld hash %08" PRIx32 "\n", rounds, h);

    /* Overlapping and unaligned copies. */
    for (int i = 0; i < 64; i++)
        buf[i] = (char)('A' + i % 26);
    memmove(buf + 5, buf + 1, 40);
    memmove(buf + 1, buf + 7, 40);
    memset(buf + 50, '#', 7);
    buf[60] = 0;
    printf("moved '%s'\n", buf);
    printf("fmt [%5s] [%-5s] [%.2s] [%c] [%5.1f] [%+d] [%x] [%o] [%#x] [%%]\n", "ab", "cd", "efgh",
           'z', 3.14159, 7, 255, 8, 255);
    char *dup = strdup(text);
    printf("strdup same %d\n", strcmp(dup, text) == 0);
    free(dup);
    return 0;
}
