/* tests/check_main.c: runs every Check suite (one per tests/test_NAME.c,
 * listed in the generated suites.h). Arguments: none (all suites), or the
 * names of the suites to run. CK_RUN_CASE selects test cases as usual. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SUITE(name) Suite *name##_suite(void);
#include "suites.h"
#undef SUITE

typedef struct { const char *name; Suite *(*make)(void); } suite_entry;

static const suite_entry suites[] = {
#define SUITE(name) { #name, name##_suite },
#include "suites.h"
#undef SUITE
};

int main(int argc, char **argv)
{
    SRunner *sr = NULL;
    for (size_t i = 0; i < sizeof suites / sizeof suites[0]; i++) {
        int wanted = argc < 2;
        for (int a = 1; a < argc; a++)
            wanted |= strcmp(argv[a], suites[i].name) == 0;
        if (!wanted)
            continue;
        if (!sr)
            sr = srunner_create(suites[i].make());
        else
            srunner_add_suite(sr, suites[i].make());
    }
    if (!sr) {
        fprintf(stderr, "rnr-tests: no suite matches\n");
        return 2;
    }
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
