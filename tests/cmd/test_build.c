/* The build itself: objects depend on the flags they were compiled with, so
 * that `make check` (-Werror) after `make` or `make demo` compiles again. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testprog.h"
#include "testskip.h"

START_TEST(objects_depend_on_the_flags)
{
    if (access("Makefile", F_OK) || access("src/common/error.c", F_OK)) {
        test_skip("no Makefile and sources in the current directory");
        return;
    }
    /* Whatever the tree holds, flags it was never built with rebuild it
     * (make -n only prints; the parent make's job server is left out). */
    static char out[1 << 16];
    ck_assert_int_eq(testprog_shell("env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -n -s "
                                    "EXTRA_CFLAGS=-DRS_FLAGS_PROBE rnnsearch 2>&1",
                                    out, sizeof out),
                     0);
    ck_assert_msg(strstr(out, "-DRS_FLAGS_PROBE") && strstr(out, "-c src/common/error.c"),
                  "objects are not rebuilt for new flags:\n%s", out);
}
END_TEST

/* `make` builds what `make install` installs: with an empty build folder a
 * dry run of the default goal links the shared and static libraries and
 * writes the manual pages and completions, not the program alone. */
START_TEST(make_builds_what_make_install_installs)
{
    if (access("Makefile", F_OK)) {
        test_skip("no Makefile in the current directory");
        return;
    }
    static char out[1 << 17];
    ck_assert_int_eq(testprog_shell("env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -n -s "
                                    "BUILD=build/dry-run-of-all 2>&1",
                                    out, sizeof out),
                     0);
    static const char *const steps[] = {"-o rnnsearch ", "-soname,librnnsearch.so.",
                                        "ar rcs build/dry-run-of-all/librnnsearch.a",
                                        "scripts/gen-man.sh", "scripts/gen-completions.sh"};
    for (size_t i = 0; i < sizeof steps / sizeof *steps; i++)
        ck_assert_msg(strstr(out, steps[i]), "`make` does not run '%s':\n%s", steps[i], out);
}
END_TEST

Suite *build_suite(void)
{
    Suite *s = suite_create("build");
    TCase *tc = tcase_create("build");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, objects_depend_on_the_flags);
    tcase_add_test(tc, make_builds_what_make_install_installs);
    suite_add_tcase(s, tc);
    return s;
}
