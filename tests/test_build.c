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

Suite *build_suite(void)
{
    Suite *s = suite_create("build");
    TCase *tc = tcase_create("build");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, objects_depend_on_the_flags);
    suite_add_tcase(s, tc);
    return s;
}
