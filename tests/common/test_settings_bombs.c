/* A YAML file built to make its reader hold far more than it was given:
 * aliases of a large value, a long section name copied into each of its
 * settings (common/settings.c). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/settings.h"
#include "testlimit.h"

/* Parses text as c.yaml in a child whose address space may grow by 128 MB
 * (not under AddressSanitizer, whose shadow counts against it), and checks
 * it is refused with a message holding `expect`. */
static void expect_refused(const char *text, const char *expect)
{
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
#if defined(__SANITIZE_ADDRESS__)
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
#else
    pid_t pid = testlimit_fork((size_t)128 << 20);
#endif
    if (pid == 0) {
        rs_settings s;
        rs_error err = {{0}};
        const int rc =
            rs_settings_parse("c.yaml", (const unsigned char *)text, strlen(text), &s, &err);
        if (write(fds[1], err.msg, strlen(err.msg) + 1) < 0)
            _exit(5);
        _exit(rc == -1 ? 0 : 6);
    }
    close(fds[1]);
    char msg[1024] = "";
    ssize_t got = read(fds[0], msg, sizeof msg - 1);
    close(fds[0]);
    const int status = testlimit_wait(pid);
    ck_assert_msg(status == 0, "child status %d (6: accepted): %s", status, msg);
    ck_assert_int_gt(got, 0);
    ck_assert_msg(strstr(msg, expect), "%s", msg);
}

/* A file of `uses` aliases of one value of value_bytes 'x's: head, then
 * each use written by `use` ("  k%d: *a\n" as keys' values, "*a, " in a
 * list), then tail. */
static char *alias_bomb(size_t value_bytes, int uses, const char *head, const char *use,
                        const char *tail)
{
    const size_t cap = value_bytes + (size_t)uses * 24 + 256;
    char *text = malloc(cap);
    ck_assert_ptr_nonnull(text);
    size_t len = (size_t)snprintf(text, cap, "model:\n  v: &a ");
    memset(text + len, 'x', value_bytes);
    len += value_bytes;
    len += (size_t)snprintf(text + len, cap - len, "\n%s", head);
    for (int i = 0; i < uses; i++)
        len += (size_t)snprintf(text + len, cap - len, use, i);
    snprintf(text + len, cap - len, "%s", tail);
    ck_assert_uint_le(strlen(text), RS_SETTINGS_MAX_BYTES);
    return text;
}

/* Each use of an alias of a value is a copy of it: 2,000 aliases of one
 * 500 kB value (a 0.5 MB file) held a gigabyte before anything refused it,
 * and 150,000 aliases of 500 bytes in a list, a 0.6 MB file, 75 MB. What a
 * file's settings hold is bounded (16 MiB): refused at the use that passes
 * it, naming file, line and key, in a few megabytes. */
START_TEST(an_alias_bomb_is_refused_within_bounded_memory)
{
    static const char *const message = "the settings would hold more than 16777216 bytes of text";
    char *text = alias_bomb(500000, 2000, "", "  k%d: *a\n", "");
    expect_refused(text, message);
    expect_refused(text, "c.yaml:35: 'k32': ");
    free(text);
    text = alias_bomb(500, 150000, "  l: [", "*a, ", "*a]\n");
    expect_refused(text, message);
    expect_refused(text, "c.yaml:3: 'l': ");
    free(text);
    /* A section's name is copied into each of its settings: 40 keys under
     * a 500 kB name (an explicit key, "? NAME", as YAML reads a plain key of
     * 1,024 characters at most). */
    char *big = malloc(RS_SETTINGS_MAX_BYTES);
    ck_assert_ptr_nonnull(big);
    size_t len = (size_t)snprintf(big, RS_SETTINGS_MAX_BYTES, "? ");
    memset(big + len, 's', 500000);
    len += 500000;
    len += (size_t)snprintf(big + len, RS_SETTINGS_MAX_BYTES - len, "\n: {k0: 1");
    for (int i = 1; i < 40; i++)
        len += (size_t)snprintf(big + len, RS_SETTINGS_MAX_BYTES - len, ", k%d: 1", i);
    snprintf(big + len, RS_SETTINGS_MAX_BYTES - len, "}\n");
    expect_refused(big, message);
    free(big);
}
END_TEST

/* Without aliases, a file's settings still hold a copy of their section's
 * name each: 80,000 keys under a 400-character name (a 0.8 MB file whose
 * settings would hold 32 MB of copies of it) are refused, 2,000 are read. */
START_TEST(a_long_section_name_counts_at_each_key)
{
    char *text = malloc(RS_SETTINGS_MAX_BYTES);
    ck_assert_ptr_nonnull(text);
    for (int keys = 2000; keys <= 80000; keys += 78000) {
        size_t len = 0;
        memset(text, 's', 400);
        len = 400;
        len += (size_t)snprintf(text + len, RS_SETTINGS_MAX_BYTES - len, ":\n");
        for (int i = 0; i < keys; i++)
            len += (size_t)snprintf(text + len, RS_SETTINGS_MAX_BYTES - len, " k%d: 1\n", i);
        ck_assert_uint_lt(len, RS_SETTINGS_MAX_BYTES);
        if (keys == 80000) {
            expect_refused(text, "the settings would hold more than 16777216 bytes of text");
            continue;
        }
        rs_settings s;
        rs_error err;
        ck_assert_msg(!rs_settings_parse("c.yaml", (const unsigned char *)text, len, &s, &err),
                      "%s", err.msg);
        ck_assert_int_eq(s.count, keys);
        rs_settings_free(&s);
    }
    free(text);
}
END_TEST

Suite *settings_bombs_suite(void)
{
    Suite *s = suite_create("settings_bombs");
    TCase *tc = tcase_create("settings_bombs");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, an_alias_bomb_is_refused_within_bounded_memory);
    tcase_add_test(tc, a_long_section_name_counts_at_each_key);
    suite_add_tcase(s, tc);
    return s;
}
