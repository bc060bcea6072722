/* Coverage in every alignment view (eval/alignment.c, alignment_formats.c):
 * Σ_i α_ij under each source word, marked below 0.2 (barely attended) and
 * above 2 (attended past twice), in the text view, the SVG picture (which
 * serve's explorer shows as it is) and the HTML page. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/alignment.h"

/* Three target rows (two words and </s>) over three source columns (two
 * words and </s>): "a" attended by every row (2.5), "b" barely (0.1). */
static void make(rs_alignment *a)
{
    const char *src[] = {"a", "b"}, *tgt[] = {"x", "y"};
    const float w[3 * 3] = {0.9f, 0.05f, 0.05f, 0.9f, 0.05f, 0.05f, 0.7f, 0.0f, 0.3f};
    rs_error err;
    ck_assert(!rs_alignment_make(a, tgt, 2, src, 2, w, &err));
}

static char *written(const rs_alignment *a, int kind, int flags)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    ck_assert_ptr_nonnull(f);
    int rc = kind == 0   ? rs_alignment_write_text(f, a, flags)
             : kind == 1 ? rs_alignment_write_svg(f, a, "t")
                         : rs_alignment_write_html(f, a, 1, flags);
    ck_assert_int_eq(rc, 0);
    fclose(f);
    return text;
}

START_TEST(coverage_sums_each_column_and_marks_the_extremes)
{
    rs_alignment a;
    make(&a);
    double cov[3];
    rs_alignment_coverage(&a, cov);
    ck_assert_double_eq_tol(cov[0], 2.5, 1e-6);
    ck_assert_double_eq_tol(cov[1], 0.1, 1e-6);
    ck_assert_double_eq_tol(cov[2], 0.4, 1e-6);
    ck_assert_int_eq(rs_coverage_mark(cov[0]), 1);
    ck_assert_int_eq(rs_coverage_mark(cov[1]), -1);
    ck_assert_int_eq(rs_coverage_mark(cov[2]), 0);
    /* the bounds themselves are unmarked */
    ck_assert_int_eq(rs_coverage_mark(0.2), 0);
    ck_assert_int_eq(rs_coverage_mark(2.0), 0);
    ck_assert_int_eq(rs_coverage_mark(0.19), -1);
    ck_assert_int_eq(rs_coverage_mark(2.01), 1);
    rs_alignment_free(&a);
}
END_TEST

/* </s> gathers the attention of every step with nothing left to translate:
 * its column is never marked, in any view, however much it received. */
START_TEST(the_end_column_is_never_marked)
{
    const char *src[] = {"a"}, *tgt[] = {"x", "y"};
    const float w[3 * 2] = {0.1f, 0.9f, 0.0f, 1.0f, 0.0f, 1.0f}; /* </s>: 2.9, "a": 0.1 */
    rs_alignment a;
    rs_error err;
    ck_assert(!rs_alignment_make(&a, tgt, 2, src, 1, w, &err));
    double cov[2];
    rs_alignment_coverage(&a, cov);
    ck_assert_int_eq(rs_coverage_mark(cov[1]), 1);
    ck_assert_int_eq(rs_alignment_coverage_mark(&a, cov, 1), 0);
    ck_assert_int_eq(rs_alignment_coverage_mark(&a, cov, 0), -1);
    char *text = written(&a, 0, 0);
    ck_assert_msg(strstr(text, "</s> 2.90\n") && strstr(text, "a 0.10\xE2\x86\x93"), "%s", text);
    free(text);
    char *svg = written(&a, 1, 0);
    ck_assert_msg(!strstr(strstr(svg, "class=\"coverage\""), "#c0392b"), "%s", svg);
    free(svg);
    char *html = written(&a, 2, 0);
    ck_assert_msg(!strstr(html, "class=\"high\""), "%s", html);
    free(html);
    rs_alignment_free(&a);
}
END_TEST

START_TEST(every_view_shows_coverage_under_each_source_word)
{
    rs_alignment a;
    make(&a);
    /* text: a Σα row of marks under the columns (↑ for a, ↓ for b), the numbers listed */
    char *text = written(&a, 0, 0);
    ck_assert_msg(strstr(text, "\nΣα   ↑ ↓   \n"), "%s", text);
    ck_assert_msg(strstr(text, "coverage Σ_i α_ij: a 2.50↑ b 0.10↓ </s> 0.40\n"), "%s", text);
    free(text);
    /* with numbers: the Σα row holds them, one cell each */
    text = written(&a, 0, RS_ALIGN_NUMBERS);
    ck_assert_msg(strstr(text, "\nΣα    2.50 0.10 0.40\n"), "%s", text);
    free(text);
    /* svg: each coverage in its column, coloured by its mark, in a group
     * of its own, and the legend */
    text = written(&a, 1, 0);
    const char *g = strstr(text, "<g class=\"coverage\">");
    ck_assert_msg(g, "%s", text);
    ck_assert_msg(strstr(g, "fill=\"#c0392b\" font-weight=\"bold\">2.50</text>") &&
                      strstr(g, "fill=\"#1f5fbf\" font-weight=\"bold\">0.10</text>") &&
                      strstr(g, "fill=\"#000000\">0.40</text>") && strstr(g, "under each source"),
                  "%s", g);
    free(text);
    /* html: a Σα row with a cell per column, classed by its mark */
    text = written(&a, 2, 0);
    ck_assert_msg(strstr(text, "<tr class=\"coverage\"><th class=\"tgt\">Σα</th>"
                               "<td class=\"high\" title=\"a: Σ_i α_ij = 2.500\">2.50</td>"
                               "<td class=\"low\" title=\"b: Σ_i α_ij = 0.100\">0.10</td>"
                               "<td title=\"&lt;/s&gt;: Σ_i α_ij = 0.400\">0.40</td></tr>"),
                  "%s", text);
    free(text);
    rs_alignment_free(&a);
}
END_TEST

Suite *coverage_suite(void)
{
    Suite *s = suite_create("coverage");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, coverage_sums_each_column_and_marks_the_extremes);
    tcase_add_test(tc, every_view_shows_coverage_under_each_source_word);
    tcase_add_test(tc, the_end_column_is_never_marked);
    suite_add_tcase(s, tc);
    return s;
}
