/* One Check runner for every suite in tests/test_*.c (listed in suites.h,
 * which the Makefile generates from the `Suite *name_suite(void)` lines). */
#include <check.h>
#include <stdlib.h>

#define X(name) Suite *name(void);
#include "suites.h"
#undef X

int main(void)
{
    SRunner *runner = srunner_create(NULL);
#define X(name) srunner_add_suite(runner, name());
#include "suites.h"
#undef X
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
