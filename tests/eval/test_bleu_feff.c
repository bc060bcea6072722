/* U+FEFF in a hypothesis or a reference (a byte order mark left inside a
 * line by concatenated files) is dropped before BLEU and chrF count, as
 * every text rnnsearch reads drops it: "\uFEFFcat" was another word than
 * "cat". */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "eval/bleu.h"
#include "eval/chrf.h"

START_TEST(a_byte_order_mark_is_no_part_of_a_word)
{
    static const char *const plain = "the black cat sat on the mat",
                             *marked[] = {"the black \xEF\xBB\xBF"
                                          "cat sat on the mat",
                                          "\xEF\xBB\xBF"
                                          "the black cat sat on the mat\xEF\xBB\xBF",
                                          "the bl\xEF\xBB\xBF"
                                          "ack cat sat on the mat"};
    const rs_bleu_opts opts[] = {
        {0, RS_BLEU_TOK_13A}, {1, RS_BLEU_TOK_INTL}, {0, RS_BLEU_TOK_CHAR}, {0, RS_BLEU_TOK_NONE}};
    rs_error err;
    for (size_t o = 0; o < sizeof opts / sizeof *opts; o++)
        for (size_t k = 0; k < sizeof marked / sizeof *marked; k++)
            for (int side = 0; side < 2; side++) {
                const char *hyp = side ? plain : marked[k], *ref = side ? marked[k] : plain;
                rs_bleu_stats b;
                rs_bleu_stats_init(&b);
                ck_assert_msg(!rs_bleu_stats_add(&b, hyp, &ref, 1, &opts[o], &err), "%s", err.msg);
                rs_bleu_result r;
                rs_bleu_compute(&b, &r);
                ck_assert_msg(r.score > 99.999, "tokenizer %zu, line %zu, %s marked: BLEU %g", o, k,
                              side ? "reference" : "hypothesis", r.score);
                rs_chrf_stats c;
                rs_chrf_stats_init(&c);
                ck_assert_msg(!rs_chrf_stats_add(&c, hyp, &ref, 1, &opts[o], &err), "%s", err.msg);
                rs_chrf_result cr;
                rs_chrf_compute(&c, &cr);
                ck_assert_msg(cr.score > 99.999, "line %zu: chrF %g", k, cr.score);
            }
    char *tokens;
    ck_assert(!rs_bleu_tokenize_line(marked[0], NULL, &tokens, &err));
    ck_assert_str_eq(tokens, plain);
    free(tokens);
}
END_TEST

Suite *bleu_feff_suite(void)
{
    Suite *s = suite_create("bleu_feff");
    TCase *tc = tcase_create("bleu_feff");
    tcase_add_test(tc, a_byte_order_mark_is_no_part_of_a_word);
    suite_add_tcase(s, tc);
    return s;
}
