/* Quality by source length (eval/bylength.c): buckets by hand, including an
 * empty one and sentences on a boundary, and each bucket's statistics equal
 * to those of its own lines scored as a corpus. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/bylength.h"
#include "eval/segments.h"
#include "testdir.h"
#include "testprog.h"

static const char *name_of(const rs_length_buckets *b, int i)
{
    static char buf[32];
    rs_length_bucket_name(b, i, buf, sizeof buf);
    return buf;
}

START_TEST(default_buckets_are_compare_mt_s)
{
    rs_length_buckets b;
    rs_length_buckets_default(&b);
    ck_assert_int_eq(b.count, 7);
    static const char *const names[] = {"<10", "10-19", "20-29", "30-39", "40-49", "50-59", ">=60"};
    for (int i = 0; i < 7; i++)
        ck_assert_str_eq(name_of(&b, i), names[i]);
    static const int words[][2] = {{0, 0},  {9, 0},  {10, 1}, {19, 1},  {20, 2},
                                   {59, 5}, {60, 6}, {61, 6}, {1000, 6}};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        ck_assert_msg(rs_length_bucket_of(&b, words[i][0]) == words[i][1], "%d words: bucket %d",
                      words[i][0], rs_length_bucket_of(&b, words[i][0]));
}
END_TEST

START_TEST(buckets_are_parsed_and_bad_bounds_refused)
{
    rs_length_buckets b;
    rs_error err;
    ck_assert_msg(!rs_length_buckets_parse(&b, "10,20,30", &err), "%s", err.msg);
    ck_assert_int_eq(b.count, 4);
    ck_assert_str_eq(name_of(&b, 0), "<10");
    ck_assert_str_eq(name_of(&b, 2), "20-29");
    ck_assert_str_eq(name_of(&b, 3), ">=30");
    ck_assert(!rs_length_buckets_parse(&b, "5,6", &err));
    ck_assert_str_eq(name_of(&b, 1), "5");
    static const char *const bad[] = {"",      "a",   "10,", ",10",   "10,10",
                                      "20,10", "0,5", "-5",  "10;20", "99999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ck_assert_msg(rs_length_buckets_parse(&b, bad[i], &err) != 0, "'%s' accepted", bad[i]);
        ck_assert_msg(strstr(err.msg, "buckets '"), "%s", err.msg);
    }
    char many[1024] = "";
    for (int i = 1; i <= RS_LENGTH_BUCKETS_MAX; i++)
        snprintf(many + strlen(many), sizeof many - strlen(many), "%s%d", i > 1 ? "," : "", i);
    ck_assert(rs_length_buckets_parse(&b, many, &err) != 0);
    ck_assert_msg(strstr(err.msg, "at most 63 bounds"), "%s", err.msg);
}
END_TEST

START_TEST(words_are_counted_as_python_splits)
{
    int n;
    rs_error err;
    ck_assert(!rs_word_count("", &n, &err) && n == 0);
    ck_assert(!rs_word_count("  \t ", &n, &err) && n == 0);
    ck_assert(!rs_word_count(" a  b\tc\n", &n, &err) && n == 3);
    /* U+3000 (ideographic space) and U+0085 are white space to str.split(); U+00A0 too. */
    ck_assert(!rs_word_count("a\xe3\x80\x80"
                             "b\xc2\x85"
                             "c\xc2\xa0"
                             "d",
                             &n, &err) &&
              n == 4);
    ck_assert(rs_word_count("a \xff b", &n, &err) != 0);
}
END_TEST

/* Sources of 3, 10 (on a boundary), 19, 25 words into buckets <10, 10-19,
 * 20-29, >=30: the last stays empty, and each bucket holds exactly the
 * statistics of its own lines. */
START_TEST(each_bucket_is_scored_as_a_corpus_of_its_lines)
{
    static const int lengths[] = {3, 10, 19, 25};
    static const char *const hyps[] = {"the cat sat", "a b c d e f g h i j", "one two three",
                                       "x y z"};
    static const char *const refs[] = {"the cat sat down", "a b c d e f g h i k", "one two four",
                                       "x y z w"};
    static const int bucket[] = {0, 1, 1, 2};
    rs_length_buckets b;
    rs_error err;
    ck_assert(!rs_length_buckets_parse(&b, "10,20,30", &err));
    rs_bucket_stats stats[RS_LENGTH_BUCKETS_MAX];
    rs_bucket_stats_init(stats, &b);
    for (int i = 0; i < 4; i++) {
        char source[512] = "";
        for (int w = 0; w < lengths[i]; w++)
            strcat(source, w ? " w" : "w");
        const char *ref[1] = {refs[i]};
        ck_assert_msg(!rs_by_length_add(stats, &b, source, hyps[i], ref, 1, NULL, &err), "%s",
                      err.msg);
    }
    for (int k = 0; k < b.count; k++) {
        rs_bleu_stats bleu;
        rs_chrf_stats chrf;
        rs_bleu_stats_init(&bleu);
        rs_chrf_stats_init(&chrf);
        long long n = 0;
        for (int i = 0; i < 4; i++)
            if (bucket[i] == k) {
                const char *ref[1] = {refs[i]};
                ck_assert(!rs_bleu_stats_add(&bleu, hyps[i], ref, 1, NULL, &err));
                ck_assert(!rs_chrf_stats_add(&chrf, hyps[i], ref, 1, NULL, &err));
                n++;
            }
        ck_assert_int_eq(stats[k].sentences, n);
        ck_assert_msg(!memcmp(&stats[k].bleu, &bleu, sizeof bleu), "bucket %d: BLEU statistics", k);
        ck_assert_msg(!memcmp(&stats[k].chrf, &chrf, sizeof chrf), "bucket %d: chrF statistics", k);
    }
    ck_assert_int_eq(stats[3].sentences, 0);
    ck_assert_int_eq(stats[1].sentences, 2);
    const char *ref[1] = {"r"};
    ck_assert(rs_by_length_add(stats, &b, NULL, "h", ref, 1, NULL, &err) != 0);
}
END_TEST

/* The program: `bleu --by-length --format tsv` gives, per bucket, what
 * `bleu` prints for that bucket's lines alone, and "nan" for an empty one.
 * Forty sentences of 1 to 40 words (9, 10, 19, 20 on the boundaries), each
 * hypothesis its reference with every third word changed. */
START_TEST(the_program_s_buckets_are_bleu_of_their_lines)
{
    char dir[64], path[256], cmd[2048];
    static char out[1 << 15];
    testdir_make(dir, "rnnsearch-bylength");
    FILE *f[3 * 5]; /* src, hyp, ref for all lines, then for buckets <10, 10-19, 20-29, >=30 */
    static const char *const names[] = {"src", "hyp", "ref"};
    for (int b = 0; b < 5; b++)
        for (int k = 0; k < 3; k++) {
            snprintf(path, sizeof path, "%s/%s%d", dir, names[k], b);
            ck_assert_ptr_nonnull(f[3 * b + k] = fopen(path, "w"));
        }
    for (int n = 1; n <= 40; n++) {
        const int bucket = 1 + (n < 10 ? 0 : n < 20 ? 1 : n < 30 ? 2 : 3);
        for (int w = 0; w < n; w++)
            for (int b = 0; b <= bucket; b += bucket) {
                fprintf(f[3 * b], "%ss%d", w ? " " : "", w);
                fprintf(f[3 * b + 1], "%s%s%d", w ? " " : "", w % 3 == 2 ? "x" : "t", w);
                fprintf(f[3 * b + 2], "%st%d", w ? " " : "", w);
            }
        for (int b = 0; b <= bucket; b += bucket)
            for (int k = 0; k < 3; k++)
                fputc('\n', f[3 * b + k]);
    }
    for (int i = 0; i < 15; i++)
        ck_assert_int_eq(fclose(f[i]), 0);
    snprintf(cmd, sizeof cmd,
             "bleu --by-length --src %s/src0 --buckets 10,20,30 --format tsv "
             "%s/hyp0 %s/ref0",
             dir, dir, dir);
    ck_assert_int_eq(testprog_run_all(cmd, out, sizeof out), 0);
    static const char *const rows[] = {"<10\t9\t", "10-19\t10\t", "20-29\t10\t", ">=30\t11\t"};
    ck_assert_msg(strstr(out, "bucket\tsentences\tbleu\tchrf\n"), "%s", out);
    for (int b = 1; b <= 4; b++) {
        const char *row = strstr(out, rows[b - 1]);
        ck_assert_msg(row, "no row '%s' in\n%s", rows[b - 1], out);
        double bleu, chrf;
        ck_assert(sscanf(row + strlen(rows[b - 1]), "%lf\t%lf", &bleu, &chrf) == 2);
        char alone[4096];
        snprintf(cmd, sizeof cmd, "bleu %s/hyp%d %s/ref%d", dir, b, dir, b);
        ck_assert_int_eq(testprog_run_all(cmd, alone, sizeof alone), 0);
        char want[64];
        snprintf(want, sizeof want, "BLEU = %.2f ", bleu);
        ck_assert_msg(strstr(alone, want), "bucket %d: '%s' not in\n%s", b, want, alone);
        snprintf(want, sizeof want, "chrF2 = %.2f", chrf);
        ck_assert_msg(strstr(alone, want), "bucket %d: '%s' not in\n%s", b, want, alone);
        ck_assert_msg(bleu > 0 && bleu < 100, "bucket %d: BLEU %g", b, bleu);
    }
    /* The text table marks a bucket of fewer than RS_LENGTH_FEW sentences
     * and says why under it; a bucket of more, and an empty one, are not. */
    snprintf(cmd, sizeof cmd, "bleu --by-length --src %s/src0 --buckets 10,39,50 %s/hyp0 %s/ref0",
             dir, dir, dir);
    ck_assert_int_eq(testprog_run_all(cmd, out, sizeof out), 0);
    static const char *const marked[][2] = {
        {"<10 ", "9"}, {"10-38 ", "29"}, {"39-49 ", "2"}, {">=50 ", "0"}};
    for (int k = 0; k < 4; k++) {
        const char *row = strstr(out, marked[k][0]);
        ck_assert_msg(row, "no row '%s' in\n%s", marked[k][0], out);
        const char *end = strchr(row, '\n');
        char line[128];
        snprintf(line, sizeof line, "%.*s", (int)(end - row), row);
        long long n;
        ck_assert(sscanf(line + strlen(marked[k][0]), "%lld", &n) == 1);
        ck_assert_int_eq(n, atoll(marked[k][1]));
        const int few = k == 0 || k == 2;
        ck_assert_msg(few == (strlen(line) > 5 && !strcmp(line + strlen(line) - 5, "  few")),
                      "'%s' %s", line, few ? "not marked few" : "marked few");
    }
    ck_assert_msg(strstr(out, "few: fewer than 20 sentences"), "%s", out);
    /* Bounds past the longest sentence leave a bucket empty. */
    snprintf(cmd, sizeof cmd,
             "bleu --by-length --src %s/src0 --buckets 10,50 --format tsv "
             "%s/hyp0 %s/ref0",
             dir, dir, dir);
    ck_assert_int_eq(testprog_run_all(cmd, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "\n>=50\t0\tnan\tnan\n"), "%s", out);
    /* plot --by-length draws tables of the same buckets, one line each, and
     * refuses tables of other buckets. */
    snprintf(cmd, sizeof cmd,
             "bleu --by-length --src %s/src0 --buckets 10,50 --format tsv %s/hyp0 %s/ref0 "
             "> %s/a.tsv 2>/dev/null && %s bleu --by-length --src %s/src0 --buckets 10,50 "
             "--format tsv %s/ref0 %s/ref0 > %s/b.tsv 2>/dev/null && %s plot --by-length "
             "RNNsearch=%s/a.tsv %s/b.tsv -o %s/fig.svg",
             dir, dir, dir, dir, testprog_path(), dir, dir, dir, dir, testprog_path(), dir, dir,
             dir);
    ck_assert_msg(testprog_run_all(cmd, out, sizeof out) == 0, "%s", out);
    char fig[128];
    snprintf(fig, sizeof fig, "%s/fig.svg", dir);
    size_t size;
    char *svg = (char *)testfile_read(fig, &size);
    ck_assert_msg(strstr(svg, ">RNNsearch</text>") && strstr(svg, ">b</text>"), "%s", svg);
    free(svg);
    snprintf(cmd, sizeof cmd,
             "bleu --by-length --src %s/src0 --format tsv %s/hyp0 %s/ref0 > %s/c.tsv 2>/dev/null "
             "&& %s plot --by-length %s/a.tsv %s/c.tsv -o %s/fig2.svg",
             dir, dir, dir, dir, testprog_path(), dir, dir, dir);
    ck_assert_int_eq(testprog_run_all(cmd, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "c.tsv has other buckets"), "%s", out);
    testdir_remove(dir);
}
END_TEST

static int count_of(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)); p += strlen(what))
        n++;
    return n;
}

/* The table `bleu --by-length --format tsv` writes, read back; malformed
 * tables refused naming file and line; the figure: well-formed SVG, a line
 * per system broken at an empty bucket, names escaped. */
START_TEST(the_figure_is_drawn_from_the_tables)
{
    char dir[64], path[256], svg[256], cmd[1024], out[4096];
    testdir_make(dir, "rnnsearch-bylength-svg");
    snprintf(path, sizeof path, "%s/a.tsv", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("bucket\tsentences\tbleu\tchrf\n<10\t5\t30.50\t50.00\n10-19\t0\tnan\tnan\n"
          ">=20\t3\t12.25\t40.00\n",
          f);
    ck_assert_int_eq(fclose(f), 0);
    rs_length_buckets b;
    double bleu[RS_LENGTH_BUCKETS_MAX];
    rs_error err;
    long long sentences[RS_LENGTH_BUCKETS_MAX];
    ck_assert_msg(!rs_by_length_read_tsv(path, &b, bleu, sentences, &err), "%s", err.msg);
    ck_assert(sentences[0] == 5 && sentences[1] == 0 && sentences[2] == 3);
    ck_assert_msg(!rs_by_length_read_tsv(path, &b, bleu, NULL, &err), "%s", err.msg);
    ck_assert_int_eq(b.count, 3);
    ck_assert_int_eq(b.lower[1], 10);
    ck_assert_int_eq(b.lower[2], 20);
    ck_assert(bleu[0] == 30.5 && isnan(bleu[1]) && bleu[2] == 12.25);
    static const char *const bad[][2] = {
        {"bucket\tsentences\tbleu\tchrf\n10-19\t1\t3\t4\n", ":2: bucket '10-19'"},
        {"bucket\tsentences\tbleu\tchrf\n<10\t1\t300\t4\n", ":2: BLEU '300'"},
        {"bucket\tsentences\tbleu\tchrf\n<10\t1\t3\n", ":2: not 'bucket"},
        {"words sentences BLEU chrF2\n", ":1: not a table"},
        {"bucket\tsentences\tbleu\tchrf\n<10\t1\t3\t4\n<5\t1\t3\t4\n", ":3: bucket '<5'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        f = fopen(path, "w");
        fputs(bad[i][0], f);
        fclose(f);
        ck_assert(rs_by_length_read_tsv(path, &b, bleu, NULL, &err) != 0);
        ck_assert_msg(strstr(err.msg, path) && strstr(err.msg, bad[i][1]), "%s", err.msg);
    }
    rs_length_buckets_default(&b);
    const double a[7] = {30, 28, NAN, 20, 15, 10, 5}, c[7] = {31, 30, 29, 28, 27, 26, 25};
    const rs_length_line lines[2] = {{"<A&B>", a, NULL}, {"RNNsearch-50", c, NULL}};
    snprintf(svg, sizeof svg, "%s/fig.svg", dir);
    f = fopen(svg, "w");
    ck_assert_int_eq(rs_by_length_svg(f, &b, lines, 2, "BLEU by length"), 0);
    ck_assert_int_eq(fclose(f), 0);
    size_t size;
    char *text = (char *)testfile_read(svg, &size);
    ck_assert_int_eq(count_of(text, "<polyline"), 3);
    ck_assert_int_eq(count_of(text, "<circle"), 13);
    ck_assert_msg(strstr(text, "&lt;A&amp;B&gt;") && !strstr(text, "<A&B>"), "names unescaped");
    ck_assert_msg(strstr(text, ">&lt;10</text>") && strstr(text, ">&gt;=60</text>"), "%s", text);
    ck_assert_msg(!strstr(text, "n = ") && !strstr(text, "few"), "sizes without sizes: %s", text);
    free(text);
    snprintf(cmd, sizeof cmd, "xmllint --noout '%s' 2>&1", svg);
    ck_assert_msg(testprog_shell(cmd, out, sizeof out) == 0, "%s", out);

    /* With sizes: each bucket's under its name, from the first line that
     * has them; a bucket of fewer than RS_LENGTH_FEW sentences marked few,
     * its points hollow (on every line with sizes), a note saying why. */
    const long long na[7] = {120, 80, 0, 40, 19, 3, 1}, nc[7] = {120, 80, 2, 40, 19, 3, 1};
    const rs_length_line sized[3] = {
        {"no sizes", c, NULL}, {"<A&B>", a, na}, {"RNNsearch-50", c, nc}};
    f = fopen(svg, "w");
    ck_assert_int_eq(rs_by_length_svg(f, &b, sized, 3, "BLEU by length"), 0);
    ck_assert_int_eq(fclose(f), 0);
    text = (char *)testfile_read(svg, &size);
    ck_assert_int_eq(count_of(text, "class=\"bucket-size"), 7);
    ck_assert_msg(strstr(text, ">n = 120</text>") && strstr(text, ">n = 40</text>") &&
                      strstr(text, ">n = 0</text>") && strstr(text, ">n = 19, few</text>") &&
                      strstr(text, ">n = 1, few</text>"),
                  "%s", text);
    ck_assert_int_eq(count_of(text, "class=\"bucket-size few\""), 3);
    ck_assert_int_eq(count_of(text, "class=\"few\" fill=\"#fff\""), 3 + 4);
    ck_assert_int_eq(count_of(text, "<circle"), 7 + 6 + 7 + 1);
    ck_assert_msg(strstr(text, "BLEU 26.00 over 3 sentences (few)") &&
                      strstr(text, "BLEU 31.00 over 120 sentences</title>"),
                  "%s", text);
    ck_assert_msg(strstr(text, "a hollow point: a bucket of fewer than 20 sentences"), "%s", text);
    free(text);
    ck_assert_msg(testprog_shell(cmd, out, sizeof out) == 0, "%s", out);
    testdir_remove(dir);
}
END_TEST

Suite *bylength_suite(void)
{
    Suite *s = suite_create("bylength");
    TCase *tc = tcase_create("bylength");
    tcase_add_test(tc, default_buckets_are_compare_mt_s);
    tcase_add_test(tc, buckets_are_parsed_and_bad_bounds_refused);
    tcase_add_test(tc, words_are_counted_as_python_splits);
    tcase_add_test(tc, each_bucket_is_scored_as_a_corpus_of_its_lines);
    tcase_add_test(tc, the_program_s_buckets_are_bleu_of_their_lines);
    tcase_add_test(tc, the_figure_is_drawn_from_the_tables);
    suite_add_tcase(s, tc);
    return s;
}
