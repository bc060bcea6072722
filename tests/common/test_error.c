/* Errors (src/common/error.c): messages formatted and cut to the buffer, the file
 * named once, checked allocation failing with a message instead of NULL
 * silently, and the checked string copy. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"

START_TEST(messages_are_formatted_named_and_bounded)
{
    rs_error err;
    ck_assert_int_eq(rs_fail(&err, "line %d: %s", 7, "bad"), -1);
    ck_assert_str_eq(err.msg, "line 7: bad");
    ck_assert_int_eq(rs_fail(NULL, "nowhere"), -1); /* a NULL error is allowed */
    rs_error_name_file(&err, "in.txt");
    ck_assert_str_eq(err.msg, "in.txt: line 7: bad");
    rs_error_name_file(&err, "in.txt"); /* already named: unchanged */
    ck_assert_str_eq(err.msg, "in.txt: line 7: bad");
    char long_text[3000];
    memset(long_text, 'x', sizeof long_text - 1);
    long_text[sizeof long_text - 1] = 0;
    rs_fail(&err, "%s", long_text);
    ck_assert_uint_eq(strlen(err.msg), sizeof err.msg - 1);
}
END_TEST

START_TEST(allocation_failure_says_so)
{
    rs_error err = {{0}};
    void *p = rs_calloc(4, sizeof(float), &err);
    ck_assert_ptr_nonnull(p);
    ck_assert(((float *)p)[3] == 0.0f);
    free(p);
    /* count × size overflows size_t: refused, not wrapped to a small block. */
    ck_assert_ptr_null(rs_calloc(SIZE_MAX / 2, 4, &err));
    ck_assert(strlen(err.msg) > 0);
}
END_TEST

/* What could not be had, and how big, in the unit that reads best. */
START_TEST(an_out_of_memory_message_names_what_and_how_big)
{
    rs_error err = {{0}};
    ck_assert_int_eq(rs_fail_memory(&err, 412.0 * (1 << 20), "the %s workspace", "training"), -1);
    ck_assert_str_eq(err.msg, "out of memory allocating the training workspace (412 MiB)");
    rs_fail_memory(&err, 1.5 * (1 << 30), "a batch");
    ck_assert_str_eq(err.msg, "out of memory allocating a batch (1.5 GiB)");
    rs_fail_memory(&err, 96, "x");
    ck_assert_str_eq(err.msg, "out of memory allocating x (96 bytes)");
    rs_fail_memory(&err, 3e15, "y");
    ck_assert_str_eq(err.msg, "out of memory allocating y (2728 TiB)");
    ck_assert_int_eq(rs_fail_memory(NULL, 1, "z"), -1);
}
END_TEST

/* A large block: zeroed to its end, aligned to 2 MB (so that huge pages can
 * back it), an overflowing size refused; a size of 0 still gives a block. */
START_TEST(large_blocks_are_zeroed_aligned_and_checked)
{
    rs_error err = {{0}};
    const size_t count = (3u << 20) / sizeof(float) + 7;
    float *p = rs_calloc_large(count, sizeof(float), &err);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq((uintptr_t)p % (2u << 20), 0);
    for (size_t i = 0; i < count; i++)
        ck_assert(p[i] == 0.0f);
    free(p);
    void *none = rs_calloc_large(0, 4, &err);
    ck_assert_ptr_nonnull(none);
    free(none);
    err.msg[0] = 0;
    ck_assert_ptr_null(rs_calloc_large(SIZE_MAX / 2, 4, &err));
    ck_assert_msg(strstr(err.msg, "out of memory"), "%s", err.msg);
}
END_TEST

START_TEST(strdup_copies_into_its_own_block)
{
    rs_error err = {{0}};
    char text[] = "das Haus";
    char *copy = rs_strdup(text, &err);
    ck_assert_ptr_nonnull(copy);
    ck_assert_ptr_ne(copy, text);
    text[0] = 'D';
    ck_assert_str_eq(copy, "das Haus");
    free(copy);
    copy = rs_strdup("", &err);
    ck_assert(copy != NULL && copy[0] == '\0');
    free(copy);
}
END_TEST

Suite *error_suite(void)
{
    Suite *s = suite_create("error");
    TCase *tc = tcase_create("error");
    tcase_add_test(tc, messages_are_formatted_named_and_bounded);
    tcase_add_test(tc, allocation_failure_says_so);
    tcase_add_test(tc, an_out_of_memory_message_names_what_and_how_big);
    tcase_add_test(tc, large_blocks_are_zeroed_aligned_and_checked);
    tcase_add_test(tc, strdup_copies_into_its_own_block);
    suite_add_tcase(s, tc);
    return s;
}
