/* Minibatches (src/data/batch.c): time-major layout, </s> appended to both sides,
 * <s> first on the decoder's input, padding past each length, translation
 * batches without targets, batches larger than the workspace refused, and
 * the length order that groups sentences into batches. */
#include <check.h>
#include <string.h>
#include <unistd.h>

#include "model/vocab.h"
#include "data/batch.h"
#include "model/params.h"
#include "testlimit.h"
#include "testskip.h"

START_TEST(fill_lays_out_time_major_with_eos_and_padding)
{
    rs_batch batch;
    rs_error err;
    ck_assert(rs_batch_alloc(&batch, 4, 6, 6, &err) == 0);
    const int s0[] = {10, 11, 12}, s1[] = {20}, t0[] = {30}, t1[] = {40, 41, 42};
    const int *src[] = {s0, s1}, *tgt[] = {t0, t1};
    const int src_count[] = {3, 1}, tgt_count[] = {1, 3};
    ck_assert(rs_batch_fill(&batch, 2, src, src_count, tgt, tgt_count, &err) == 0);
    ck_assert_int_eq(batch.B, 2);
    ck_assert_int_eq(batch.S, 4); /* 3 tokens + </s> */
    ck_assert_int_eq(batch.T, 4);
    ck_assert_int_eq(batch.src_len[0], 4);
    ck_assert_int_eq(batch.src_len[1], 2);
    ck_assert_int_eq(batch.tgt_len[0], 2);
    ck_assert_int_eq(batch.tgt_len[1], 4);
    /* src [S,B]: column b is sentence b. */
    const int want_src[] = {10, 20, 11, RS_EOS, 12, RS_PAD, RS_EOS, RS_PAD};
    for (int k = 0; k < 8; k++)
        ck_assert_msg(batch.src[k] == want_src[k], "src[%d] = %d", k, batch.src[k]);
    /* tgt_in is <s> y_1 … (teacher forcing); tgt_out is y_1 … </s>. */
    const int want_in[] = {RS_BOS, RS_BOS, 30, 40, RS_PAD, 41, RS_PAD, 42};
    const int want_out[] = {30, 40, RS_EOS, 41, RS_PAD, 42, RS_PAD, RS_EOS};
    for (int k = 0; k < 8; k++) {
        ck_assert_msg(batch.tgt_in[k] == want_in[k], "tgt_in[%d] = %d", k, batch.tgt_in[k]);
        ck_assert_msg(batch.tgt_out[k] == want_out[k], "tgt_out[%d] = %d", k, batch.tgt_out[k]);
    }
    /* A second fill (smaller) replaces the first. */
    const int *one_src[] = {s1};
    const int zero = 0;
    ck_assert(rs_batch_fill(&batch, 1, one_src, &src_count[1], NULL, NULL, &err) == 0);
    ck_assert_int_eq(batch.B, 1);
    ck_assert_int_eq(batch.S, 2);
    ck_assert_int_eq(batch.T, 0); /* no targets */
    ck_assert(batch.src[0] == 20 && batch.src[1] == RS_EOS);
    /* An empty sentence is just </s>. */
    ck_assert(rs_batch_fill(&batch, 1, one_src, &zero, NULL, NULL, &err) == 0);
    ck_assert(batch.S == 1 && batch.src[0] == RS_EOS && batch.src_len[0] == 1);
    rs_batch_free(&batch);
    ck_assert_ptr_null(batch.src);
}
END_TEST

START_TEST(fill_refuses_what_does_not_fit)
{
    rs_batch batch;
    rs_error err;
    ck_assert(rs_batch_alloc(&batch, 2, 3, 3, &err) == 0);
    const int s[] = {5, 6, 7}, t[] = {8, 9, 10};
    const int *src[] = {s, s, s}, *tgt[] = {t, t, t};
    const int three[] = {3, 3, 3}, one[] = {1, 1, 1}, two[] = {2, 2, 2};
    /* 3 tokens + </s> = 4 > max_S = 3. */
    ck_assert_int_eq(rs_batch_fill(&batch, 1, src, three, tgt, one, &err), -1);
    ck_assert_msg(strstr(err.msg, "exceeds") != NULL, "%s", err.msg);
    /* 3 rows > max_B = 2. */
    ck_assert_int_eq(rs_batch_fill(&batch, 3, src, two, tgt, one, &err), -1);
    /* Targets too long. */
    ck_assert_int_eq(rs_batch_fill(&batch, 1, src, two, tgt, three, &err), -1);
    /* At the limits exactly: fits. */
    ck_assert_int_eq(rs_batch_fill(&batch, 2, src, two, tgt, two, &err), 0);
    rs_batch_free(&batch);
}
END_TEST

START_TEST(length_order_sorts_by_length_then_index)
{
    rs_error err;
    const int len[] = {3, 0, 5, 3, 1, 0, 3};
    const int want[] = {1, 5, 4, 0, 3, 6, 2};
    int order[7];
    ck_assert_int_eq(rs_batch_length_order(7, len, order, &err), 0);
    for (int k = 0; k < 7; k++)
        ck_assert_msg(order[k] == want[k], "order[%d] = %d, want %d", k, order[k], want[k]);
    /* No sentences: nothing to order, and no failure. */
    ck_assert_int_eq(rs_batch_length_order(0, len, order, &err), 0);
}
END_TEST

/* A batch that cannot be had: the message says what, for how many pairs,
 * and how big (4 GiB of source positions, under an address-space limit). */
START_TEST(a_batch_that_does_not_fit_is_named_with_its_size)
{
#if defined(__SANITIZE_ADDRESS__)
    test_skip("batch: the out-of-memory test under AddressSanitizer (it aborts on a failed "
              "allocation)");
#else
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    pid_t pid = testlimit_fork((size_t)64 << 20);
    if (pid == 0) {
        rs_batch b;
        rs_error err = {{0}};
        const int rc = rs_batch_alloc(&b, 1 << 16, 1 << 14, 1, &err);
        if (write(fds[1], err.msg, strlen(err.msg) + 1) < 0)
            _exit(5);
        _exit(rc == -1 && !b.src ? 0 : 6);
    }
    close(fds[1]);
    char msg[1024] = "";
    const ssize_t got = read(fds[0], msg, sizeof msg - 1);
    close(fds[0]);
    ck_assert_int_eq(testlimit_wait(pid), 0);
    ck_assert_int_gt(got, 0);
    ck_assert_msg(strstr(msg, "out of memory allocating a batch of 65536 pairs of up to 16384 "
                              "source and 1 target positions (4.0 GiB)"),
                  "%s", msg);
#endif
}
END_TEST

Suite *batch_suite(void)
{
    Suite *s = suite_create("batch");
    TCase *tc = tcase_create("minibatches");
    tcase_add_test(tc, fill_lays_out_time_major_with_eos_and_padding);
    tcase_add_test(tc, fill_refuses_what_does_not_fit);
    tcase_add_test(tc, length_order_sorts_by_length_then_index);
    tcase_add_test(tc, a_batch_that_does_not_fit_is_named_with_its_size);
    suite_add_tcase(s, tc);
    return s;
}
