/* Forced decoding of an empty source (search/forced.c): with an empty
 * target its log p is 0 and its </s> aligned to the source's, without
 * decoding, as translate gives an empty line; with a target it is refused,
 * naming the pair. */
#include <check.h>
#include <string.h>

#include "search/forced.h"
#include "tinymodel.h"

START_TEST(an_empty_source_has_only_the_empty_translation)
{
    rs_model m;
    tiny_model_make(&m, "additive", 0.5f, 0.0f, 2);
    const rs_ready member_ready = rs_ready_plain(&m), *member = &member_ready;
    static const int src1[] = {4, 5}, tgt1[] = {6};
    const int *src[] = {src1, NULL, src1}, *tgt[] = {tgt1, NULL, NULL};
    int src_len[] = {2, 0, 2}, tgt_len[] = {1, 0, 0}, line[] = {0, 1, 2};
    rs_dataset data = {.count = 3,
                       .src = (int **)src,
                       .tgt = (int **)tgt,
                       .src_len = src_len,
                       .tgt_len = tgt_len,
                       .line = line};
    rs_forced out[3];
    rs_error err;
    ck_assert_msg(
        !rs_forced_decode(&member, 1, &data, 2, RS_FORCED_TOKENS | RS_FORCED_ALIGNMENT, out, &err),
        "%s", err.msg);
    ck_assert(out[1].logprob == 0 && out[1].token_logprobs[0] == 0 && out[1].alignment[0] == 1);
    ck_assert(out[0].logprob < 0 && out[2].logprob < 0);
    for (int i = 0; i < 3; i++)
        rs_forced_free(&out[i]);
    tgt_len[1] = 1;
    tgt[1] = tgt1;
    ck_assert_int_eq(rs_forced_decode(&member, 1, &data, 2, 0, out, &err), -1);
    ck_assert_str_eq(err.msg, "pair 2: an empty source has no translation but the empty one "
                              "(translate gives an empty line for it)");
    rs_model_free(&m);
}
END_TEST

Suite *forced_empty_suite(void)
{
    Suite *s = suite_create("forced_empty");
    TCase *tc = tcase_create("forced_empty");
    tcase_add_test(tc, an_empty_source_has_only_the_empty_translation);
    suite_add_tcase(s, tc);
    return s;
}
