/* BLEU and chrF against hand-computed cases and sacreBLEU's published outputs
 * (its README: corpus_score of the three-sentence, two-reference example). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/bleu.h"
#include "eval/chrf.h"
#include "testdir.h"
#include "testprog.h"

static const rs_bleu_opts tok13a = {0, RS_BLEU_TOK_13A};

/* BLEU of single-reference segments. */
static void bleu_of(rs_bleu_result *res, const char *const *hyps, const char *const *refs, int n,
                    const rs_bleu_opts *opts)
{
    rs_bleu_stats stats;
    rs_error err = {{0}};
    rs_bleu_stats_init(&stats);
    for (int i = 0; i < n; i++)
        ck_assert_msg(rs_bleu_stats_add(&stats, hyps[i], &refs[i], 1, opts, &err) == 0, "%s",
                      err.msg);
    rs_bleu_compute(&stats, res);
}

static double chrf_of(const char *const *hyps, const char *const *refs, int n)
{
    rs_chrf_stats stats;
    rs_chrf_result res;
    rs_error err = {{0}};
    rs_chrf_stats_init(&stats);
    for (int i = 0; i < n; i++)
        ck_assert_msg(rs_chrf_stats_add(&stats, hyps[i], &refs[i], 1, NULL, &err) == 0, "%s",
                      err.msg);
    rs_chrf_compute(&stats, &res);
    return res.score;
}

static void expect_tokens(const char *line, const rs_bleu_opts *opts, const char *want)
{
    char *got = NULL;
    rs_error err = {{0}};
    ck_assert_msg(rs_bleu_tokenize_line(line, opts, &got, &err) == 0, "%s", err.msg);
    ck_assert_msg(strcmp(got, want) == 0, "tokenized \"%s\" as \"%s\", want \"%s\"", line, got,
                  want);
    free(got);
}

START_TEST(test_perfect_match)
{
    const char *h[] = {"The cat sat on the mat.", "It was raining, again."};
    rs_bleu_result r;
    bleu_of(&r, h, h, 2, &tok13a);
    ck_assert_double_eq_tol(r.score, 100.0, 1e-9);
    for (int n = 0; n < 4; n++)
        ck_assert_double_eq_tol(r.precisions[n], 100.0, 1e-12);
    ck_assert_double_eq(r.bp, 1.0);
    ck_assert_int_eq(r.hyp_len, 13);
    ck_assert_int_eq(r.ref_len, 13);
    ck_assert_double_eq_tol(chrf_of(h, h, 2), 100.0, 1e-9);
}
END_TEST

START_TEST(test_no_match)
{
    const char *h[] = {"a b c d e"}, *ref[] = {"v w x y z"};
    rs_bleu_result r;
    bleu_of(&r, h, ref, 1, &tok13a);
    /* sacreBLEU returns 0 with all precisions 0 when nothing matches */
    ck_assert_double_eq(r.score, 0.0);
    for (int n = 0; n < 4; n++)
        ck_assert_double_eq(r.precisions[n], 0.0);
    ck_assert_int_eq(r.total[0], 5);
    ck_assert_double_eq(chrf_of(h, ref, 1), 0.0);
}
END_TEST

START_TEST(test_brevity_penalty)
{
    /* every hypothesis n-gram matches; only the brevity penalty is left:
     * BP = exp(1 - 6/5) */
    const char *h[] = {"the cat sat on the"}, *ref[] = {"the cat sat on the mat"};
    rs_bleu_result r;
    bleu_of(&r, h, ref, 1, &tok13a);
    ck_assert_double_eq_tol(r.bp, exp(1.0 - 6.0 / 5.0), 1e-15);
    ck_assert_double_eq_tol(r.score, 100.0 * exp(-0.2), 1e-9);
    ck_assert_double_eq_tol(r.ratio, 5.0 / 6.0, 1e-15);

    /* two tokens: no trigrams at all, so BLEU is 0 whatever the penalty */
    const char *h2[] = {"the cat"};
    char buf[256];
    bleu_of(&r, h2, ref, 1, &tok13a);
    rs_bleu_format(&r, buf, sizeof buf);
    ck_assert_str_eq(buf, "BLEU = 0.00 100.0/100.0/0.0/0.0 (BP = 0.135 ratio = 0.333 hyp_len = 2 "
                          "ref_len = 6)");

    /* a longer hypothesis has no penalty */
    const char *h3[] = {"the cat sat on the mat today"};
    bleu_of(&r, h3, ref, 1, &tok13a);
    ck_assert_double_eq(r.bp, 1.0);
}
END_TEST

START_TEST(test_hand_worked)
{
    /* hyp: the cat sat on a mat / ref: the cat sat on the mat
     * 1-grams 5/6 (a), 2-grams 3/5 (on a, a mat), 3-grams 2/4, 4-grams 1/3;
     * BLEU = 100 * (5/6 * 3/5 * 2/4 * 1/3)^(1/4) = 100 * 12^(-1/4) */
    const char *h[] = {"the cat sat on a mat"}, *ref[] = {"the cat sat on the mat"};
    rs_bleu_result r;
    bleu_of(&r, h, ref, 1, &tok13a);
    ck_assert_double_eq_tol(r.precisions[0], 500.0 / 6.0, 1e-12);
    ck_assert_double_eq_tol(r.precisions[1], 60.0, 1e-12);
    ck_assert_double_eq_tol(r.precisions[2], 50.0, 1e-12);
    ck_assert_double_eq_tol(r.precisions[3], 100.0 / 3.0, 1e-12);
    ck_assert_double_eq_tol(r.score, 100.0 * pow(12.0, -0.25), 1e-9);
    ck_assert_int_eq(r.correct[1], 3);
    ck_assert_int_eq(r.total[3], 3);
}
END_TEST

START_TEST(test_clipping_and_exp_smoothing)
{
    /* Papineni's example: "the" is clipped to its reference count 2; no
     * bigram, trigram or 4-gram matches, so exp smoothing gives them
     * 1/2, 1/4 and 1/8 of a match: 100/(2*6), 100/(4*5), 100/(8*4). */
    const char *h[] = {"the the the the the the the"}, *ref[] = {"the cat is on the mat"};
    rs_bleu_result r;
    bleu_of(&r, h, ref, 1, &tok13a);
    ck_assert_int_eq(r.correct[0], 2);
    ck_assert_double_eq_tol(r.precisions[0], 200.0 / 7.0, 1e-12);
    ck_assert_double_eq_tol(r.precisions[1], 100.0 / 12.0, 1e-12);
    ck_assert_double_eq_tol(r.precisions[2], 5.0, 1e-12);
    ck_assert_double_eq_tol(r.precisions[3], 3.125, 1e-12);
    double want = pow(200.0 / 7.0 * 100.0 / 12.0 * 5.0 * 3.125, 0.25);
    ck_assert_double_eq_tol(r.score, want, 1e-9);
    char buf[256];
    rs_bleu_format(&r, buf, sizeof buf);
    ck_assert_str_eq(buf, "BLEU = 7.81 28.6/8.3/5.0/3.1 (BP = 1.000 ratio = 1.167 hyp_len = 7 "
                          "ref_len = 6)");
}
END_TEST

START_TEST(test_lowercase)
{
    const char *h[] = {"The Cat Sat Down"}, *ref[] = {"the cat sat down"};
    rs_bleu_result r;
    bleu_of(&r, h, ref, 1, &tok13a);
    ck_assert_double_eq(r.score, 0.0);
    rs_bleu_opts lc = {1, RS_BLEU_TOK_13A};
    bleu_of(&r, h, ref, 1, &lc);
    ck_assert_double_eq_tol(r.score, 100.0, 1e-9);

    rs_chrf_stats cs;
    rs_chrf_result cr;
    rs_error err;
    rs_chrf_stats_init(&cs);
    const char *abc[] = {"abc"};
    ck_assert_int_eq(rs_chrf_stats_add(&cs, "ABC", abc, 1, &lc, &err), 0);
    rs_chrf_compute(&cs, &cr);
    ck_assert_double_eq_tol(cr.score, 100.0, 1e-9);

    /* Python's str.lower(): final sigma at a word's end, dotted I to i + U+0307 */
    expect_tokens("ΟΔΟΣ Σ ΣΑΣ.", &lc, "οδος σ σας .");
    expect_tokens("İ", &lc, "i\xcc\x87");
}
END_TEST

START_TEST(test_tokenize_13a)
{
    expect_tokens("Hello, world.", &tok13a, "Hello , world .");
    /* periods and commas stay inside numbers; a dash splits after a digit */
    expect_tokens("It costs $3.50, or 1,000 yen (1-2 days).", &tok13a,
                  "It costs $ 3.50 , or 1,000 yen ( 1 - 2 days ) .");
    /* apostrophes and hyphens between letters stay */
    expect_tokens("don't re-use e-mail", &tok13a, "don't re-use e-mail");
    /* entities are unescaped, <skipped> dropped, whitespace collapsed */
    expect_tokens("&quot;A&quot; &amp; &lt;b&gt;<skipped>  x\t\u00a0y ", &tok13a,
                  "\" A \" & < b > x y");
    expect_tokens("a-\nb", &tok13a, "ab");
    expect_tokens("", &tok13a, "");
    rs_bleu_opts none = {0, RS_BLEU_TOK_NONE};
    expect_tokens("  Hello, world.  ", &none, "Hello, world.");
}
END_TEST

static const char *const sys3[] = {"The dog bit the man.", "It wasn't surprising.",
                                   "The man had just bitten him."};
static const char *const refA[] = {"The dog bit the man.", "It was not unexpected.",
                                   "The man bit him first."};
static const char *const refB[] = {"The dog had bit the man.", "No one was surprised.",
                                   "The man had bitten the dog."};

/* sacreBLEU's tokenize 'intl' (TokenizerV14International: re.sub of
 * (\P{N})(\p{P}) by "\1 \2 ", then (\p{P})(\P{N}) by " \1 \2", then (\p{S})
 * by " \1 ", then split) and 'char' (" ".join(line), then split), worked by
 * hand from those rules; the comments give the passes. */
START_TEST(test_tokenize_intl_char)
{
    const rs_bleu_opts intl = {0, RS_BLEU_TOK_INTL}, chr = {0, RS_BLEU_TOK_CHAR};
    /* "o," and "d!" split by the first pass; "3.14" and "1,000" keep their
     * punctuation between digits; the euro sign (Sc) is split off by the third. */
    expect_tokens("Hello, world! 3.14 and 1,000 \xe2\x82\xac"
                  "5",
                  &intl, "Hello , world ! 3.14 and 1,000 \xe2\x82\xac 5");
    /* « (Pi), » (Pf), the em dash and hyphen (Pd): the first pass splits "r»",
     * "t-", "l."; the second "«B", "—d", "-i" */
    expect_tokens("\xc2\xab"
                  "Bonjour\xc2\xbb\xe2\x80\x94"
                  "dit-il.",
                  &intl, "\xc2\xab Bonjour \xc2\xbb \xe2\x80\x94 dit - il .");
    /* symbols Sm, Sc, So, Sk: always split, digits or not */
    expect_tokens("a+b=c $5 \xc2\xa9"
                  "2020 x^2",
                  &intl, "a + b = c $ 5 \xc2\xa9 2020 x ^ 2");
    /* between digits nothing splits; a space is a non-digit, so "5. " and
     * " .5" split ("5." is followed by one, ".5" follows one); only at the
     * line's edges do ".5" and "5." stay whole */
    expect_tokens("1.5-2,3 5. .5 a.5", &intl, "1.5-2,3 5 . . 5 a . 5");
    expect_tokens(".5 x 5.", &intl, ".5 x 5.");
    /* matches do not overlap: in "a,,b" the first pass takes "a,", the second ",b" */
    expect_tokens("a,,b", &intl, "a , , b");
    /* CJK full stop (Po) after a letter */
    expect_tokens("\xe4\xbd\xa0\xe5\xa5\xbd\xe3\x80\x82", &intl,
                  "\xe4\xbd\xa0\xe5\xa5\xbd \xe3\x80\x82");
    /* char: every code point but whitespace a token */
    expect_tokens("ab  c!", &chr, "a b c !");
    expect_tokens("\xe6\x97\xa5\xe6\x9c\xac \xe8\xaa\x9e", &chr,
                  "\xe6\x97\xa5 \xe6\x9c\xac \xe8\xaa\x9e");
    /* lower-casing comes first, as for 13a */
    const rs_bleu_opts lc_char = {1, RS_BLEU_TOK_CHAR};
    expect_tokens("AbC", &lc_char, "a b c");
    /* BLEU of char tokens: "abcde" against "abcdf": 4/5, 3/4, 2/3, 1/2 */
    const char *h[] = {"abcde"}, *r[] = {"abcdf"};
    rs_bleu_result res;
    bleu_of(&res, h, r, 1, &chr);
    ck_assert_int_eq(res.hyp_len, 5);
    ck_assert_double_eq_tol(res.score, 100.0 * pow(0.8 * 0.75 * (2.0 / 3) * 0.5, 0.25), 1e-9);
    char sig[256];
    rs_bleu_signature(&intl, 1, 0, "v", sig, sizeof sig);
    ck_assert_msg(strstr(sig, "|tok:intl|"), "%s", sig);
    rs_bleu_signature(&chr, 1, 0, "v", sig, sizeof sig);
    ck_assert_msg(strstr(sig, "|tok:char|"), "%s", sig);
}
END_TEST

START_TEST(test_sacrebleu_readme)
{
    rs_bleu_stats bs;
    rs_chrf_stats cs;
    rs_error err = {{0}};
    rs_bleu_stats_init(&bs);
    rs_chrf_stats_init(&cs);
    for (int i = 0; i < 3; i++) {
        const char *refs[] = {refA[i], refB[i]};
        ck_assert_msg(rs_bleu_stats_add(&bs, sys3[i], refs, 2, NULL, &err) == 0, "%s", err.msg);
        ck_assert_msg(rs_chrf_stats_add(&cs, sys3[i], refs, 2, NULL, &err) == 0, "%s", err.msg);
    }
    rs_bleu_result br;
    rs_chrf_result cr;
    char buf[256];
    rs_bleu_compute(&bs, &br);
    rs_bleu_format(&br, buf, sizeof buf);
    ck_assert_str_eq(buf, "BLEU = 48.53 82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 "
                          "hyp_len = 17 ref_len = 18)");
    rs_chrf_compute(&cs, &cr);
    rs_chrf_format(&cr, buf, sizeof buf);
    ck_assert_str_eq(buf, "chrF2 = 59.73");

    /* the README's variable-reference case: the first reference of the first
     * sentence is '' and is skipped */
    rs_bleu_stats_init(&bs);
    for (int i = 0; i < 3; i++) {
        const char *refs[] = {i == 0 ? "" : refA[i], refB[i]};
        ck_assert_msg(rs_bleu_stats_add(&bs, sys3[i], refs, 2, NULL, &err) == 0, "%s", err.msg);
    }
    rs_bleu_compute(&bs, &br);
    rs_bleu_format(&br, buf, sizeof buf);
    ck_assert_str_eq(buf, "BLEU = 29.44 82.4/42.9/27.3/12.5 (BP = 0.889 ratio = 0.895 "
                          "hyp_len = 17 ref_len = 19)");
}
END_TEST

START_TEST(test_multiple_references)
{
    rs_bleu_stats s;
    rs_error err;
    /* clipped by the largest count in any one reference, not their sum */
    const char *refs[] = {"the cat", "the the dog"};
    rs_bleu_stats_init(&s);
    ck_assert_int_eq(rs_bleu_stats_add(&s, "the the the", refs, 2, NULL, &err), 0);
    ck_assert_int_eq(s.correct[0], 2);
    ck_assert_int_eq(s.correct[1], 1);
    /* closest reference length; a tie goes to the shorter reference */
    const char *tie[] = {"a b c d e", "a b c"};
    rs_bleu_stats_init(&s);
    ck_assert_int_eq(rs_bleu_stats_add(&s, "a b c d", tie, 2, NULL, &err), 0);
    ck_assert_int_eq(s.ref_len, 3);
    const char *near[] = {"a b c d e f g", "a b c d e"};
    rs_bleu_stats_init(&s);
    ck_assert_int_eq(rs_bleu_stats_add(&s, "a b c d", near, 2, NULL, &err), 0);
    ck_assert_int_eq(s.ref_len, 5);
}
END_TEST

START_TEST(test_chrf_hand)
{
    /* "ab" vs "ac": 1-grams P = R = 1/2, 2-grams 0; average P = R = 1/4;
     * F2 = 5 * 1/4 * 1/4 / (4 * 1/4 + 1/4) = 1/4 */
    const char *h1[] = {"ab"}, *r1[] = {"ac"};
    ck_assert_double_eq_tol(chrf_of(h1, r1, 1), 25.0, 1e-12);
    /* "abc" vs "ab": 1-grams P 2/3 R 1, 2-grams P 1/2 R 1, no reference
     * 3-grams; P = 7/12, R = 1, F2 = 5 * 7/12 / (28/12 + 1) = 7/8 */
    const char *h2[] = {"abc"}, *r2[] = {"ab"};
    ck_assert_double_eq_tol(chrf_of(h2, r2, 1), 87.5, 1e-12);
    /* whitespace does not count */
    const char *h3[] = {" a b\tc "}, *r3[] = {"abc"};
    ck_assert_double_eq_tol(chrf_of(h3, r3, 1), 100.0, 1e-12);
    /* the corpus score is the F of summed statistics, not the mean of 25 and
     * 87.5: 1-grams 3/5 and 3/4, 2-grams 1/3 and 1/2, so P = 7/15, R = 5/8 and
     * F2 = 5 P R / (4 P + R) = 175/299 */
    const char *hs[] = {"ab", "abc"}, *rs[] = {"ac", "ab"};
    ck_assert_double_eq_tol(chrf_of(hs, rs, 2), 17500.0 / 299.0, 1e-9);
    /* characters are code points: é is one character */
    const char *h4[] = {"é"}, *r4[] = {"e"};
    ck_assert_double_eq(chrf_of(h4, r4, 1), 0.0);
    /* with several references the best one counts */
    rs_chrf_stats s;
    rs_chrf_result res;
    rs_error err;
    const char *refs[] = {"xyz", "abc", "abd"};
    rs_chrf_stats_init(&s);
    ck_assert_int_eq(rs_chrf_stats_add(&s, "abc", refs, 3, NULL, &err), 0);
    rs_chrf_compute(&s, &res);
    ck_assert_double_eq_tol(res.score, 100.0, 1e-12);
    ck_assert_int_eq(res.effective_order, 3);
}
END_TEST

START_TEST(test_errors)
{
    rs_bleu_stats bs;
    rs_chrf_stats cs;
    rs_error err = {{0}};
    rs_bleu_stats_init(&bs);
    rs_chrf_stats_init(&cs);
    const char *empty[] = {"", ""};
    ck_assert_int_eq(rs_bleu_stats_add(&bs, "a", empty, 2, NULL, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "empty"));
    ck_assert_int_eq(rs_chrf_stats_add(&cs, "a", empty, 2, NULL, &err), -1);
    const char *bad[] = {"ok \xff"};
    ck_assert_int_eq(rs_bleu_stats_add(&bs, "a", bad, 1, NULL, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "reference 1 is not valid UTF-8"));
    const char *ok[] = {"x"};
    ck_assert_int_eq(rs_chrf_stats_add(&cs, "\xc3", ok, 1, NULL, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "hypothesis is not valid UTF-8"));
    ck_assert_int_eq(rs_bleu_stats_add(&bs, "a", bad, 0, NULL, &err), -1);
    /* failed segments leave the statistics alone */
    ck_assert_int_eq(bs.segments, 0);
    ck_assert_int_eq(bs.hyp_len, 0);
    ck_assert_int_eq(cs.segments, 0);
}
END_TEST

/* Effective order (sentence BLEU): "a dog ran" against "the dog ran" has
 * 1-grams 2/3, 2-grams 1/2, 3-grams 0/1 (exp smoothing: 1/2 of a match, so
 * 50%) and no 4-grams: the mean runs over three orders,
 * (66.67 * 50 * 50)^(1/3) = 55.03. Without it the missing 4-grams make 0. */
START_TEST(test_effective_order)
{
    const char *hyp = "a dog ran", *ref = "the dog ran";
    rs_bleu_stats stats;
    rs_bleu_result res;
    rs_error err = {{0}};
    rs_bleu_stats_init(&stats);
    ck_assert(rs_bleu_stats_add(&stats, hyp, &ref, 1, NULL, &err) == 0);
    rs_bleu_compute_order(&stats, 1, &res);
    ck_assert_double_eq_tol(res.score, cbrt(200.0 / 3 * 50 * 50), 1e-9);
    rs_bleu_compute_order(&stats, 0, &res);
    ck_assert_double_eq_tol(res.score, 0.0, 1e-12);
    rs_bleu_compute(&stats, &res);
    ck_assert_double_eq_tol(res.score, 0.0, 1e-12);
}
END_TEST

START_TEST(test_signatures)
{
    char buf[256];
    rs_bleu_opts lc_none = {1, RS_BLEU_TOK_NONE};
    rs_bleu_signature(NULL, 1, 0, "rnnsearch-9", buf, sizeof buf);
    ck_assert_str_eq(buf, "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:rnnsearch-9");
    rs_bleu_signature(&lc_none, 2, 1, "v", buf, sizeof buf);
    ck_assert_str_eq(buf, "nrefs:2|case:lc|eff:yes|tok:none|smooth:exp|version:v");
    rs_chrf_signature(NULL, 3, "v", buf, sizeof buf);
    ck_assert_str_eq(buf, "nrefs:3|case:mixed|eff:yes|nc:6|nw:0|space:no|version:v");
    rs_bleu_signature(NULL, RS_NREFS_VAR, 0, "v", buf, sizeof buf);
    ck_assert_str_eq(buf, "nrefs:var|case:mixed|eff:no|tok:13a|smooth:exp|version:v");
    const char *refs[3] = {"a", "", "b"};
    ck_assert_int_eq(rs_bleu_nonempty_refs(refs, 3), 2);
}
END_TEST

/* ---- the command, through the program ($RNNSEARCH, as `make check` sets) -- */

static void write_file(const char *path, const char *text)
{
    testfile_write(path, (const unsigned char *)text, strlen(text));
}

/* Runs `program bleu ARGS`; returns the exit status, output in *out, *errs. */
static int run_bleu(const char *args, char **out, char **errs)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "bleu %s", args);
    int rc = testprog_run_split(cmd, out, errs);
    ck_assert_msg(!strstr(*errs, "unknown command"),
                  "%s has no 'bleu' command: src/cmd/main.c must dispatch it to cmd_bleu",
                  testprog_path());
    return rc;
}

START_TEST(test_command)
{
    char dir[64], args[2048], path[3][600];
    testdir_make(dir, "rs_bleu");
    const char *names[] = {"hyp.txt", "refA.txt", "refB.txt"};
    const char *const *texts[] = {sys3, refA, refB};
    for (int f = 0; f < 3; f++) {
        char body[512] = "";
        for (int i = 0; i < 3; i++) {
            strcat(body, texts[f][i]);
            /* trailing whitespace and CRLF endings do not change the score */
            strcat(body, f == 1 ? " \r\n" : "\n");
        }
        snprintf(path[f], sizeof path[f], "%s/%s", dir, names[f]);
        write_file(path[f], body);
    }
    char *out, *errs;
    snprintf(args, sizeof args, "'%s' '%s' '%s'", path[0], path[1], path[2]);
    ck_assert_int_eq(run_bleu(args, &out, &errs), 0);
    ck_assert_str_eq(out, "BLEU = 48.53 82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 hyp_len = 17 "
                          "ref_len = 18)\nchrF2 = 59.73\n");
    free(out), free(errs);

    snprintf(args, sizeof args, "--metric chrf - '%s' '%s' <'%s'", path[1], path[2], path[0]);
    ck_assert_int_eq(run_bleu(args, &out, &errs), 0);
    ck_assert_str_eq(out, "chrF2 = 59.73\n");
    free(out), free(errs);

    /* a reference with a line too few: refused, naming both files and counts,
     * for BLEU and chrF alike */
    char shortref[600];
    snprintf(shortref, sizeof shortref, "%s/short.txt", dir);
    write_file(shortref, "one\ntwo\n");
    for (int chrf = 0; chrf < 2; chrf++) {
        snprintf(args, sizeof args, "%s '%s' '%s'", chrf ? "--metric chrf" : "", path[0], shortref);
        ck_assert_int_eq(run_bleu(args, &out, &errs), 2);
        ck_assert_msg(strstr(errs, "rnnsearch bleu: ") &&
                          strstr(errs, "hyp.txt has 3 lines but ") &&
                          strstr(errs, "short.txt has 2"),
                      "%s", errs);
        ck_assert_str_eq(out, "");
        free(out), free(errs);
    }

    /* Moses n-best lines as the hypothesis: refused at the first such line,
     * for BLEU and chrF alike, with nothing scored */
    char nbest[600];
    snprintf(nbest, sizeof nbest, "%s/nbest.txt", dir);
    write_file(nbest, "a plain line\n1 ||| it is a guide ||| F0= -2.5 ||| -0.625\nthird\n");
    for (int chrf = 0; chrf < 2; chrf++) {
        snprintf(args, sizeof args, "%s '%s' '%s'", chrf ? "--metric chrf" : "", nbest, path[1]);
        ck_assert_int_eq(run_bleu(args, &out, &errs), 2);
        ck_assert_msg(strstr(errs, "nbest.txt:2: an n-best line"), "%s", errs);
        ck_assert_str_eq(out, "");
        free(out), free(errs);
    }
    /* An n-best list of two a sentence has twice the lines: it is named for
     * what it is, not for its line count. */
    write_file(nbest, "0 ||| a ||| F0= -1 ||| -1\n0 ||| b ||| F0= -2 ||| -2\n"
                      "1 ||| c ||| F0= -1 ||| -1\n1 ||| d ||| F0= -2 ||| -2\n"
                      "2 ||| e ||| F0= -1 ||| -1\n2 ||| f ||| F0= -2 ||| -2\n");
    snprintf(args, sizeof args, "'%s' '%s'", nbest, path[1]);
    ck_assert_int_eq(run_bleu(args, &out, &errs), 2);
    ck_assert_msg(strstr(errs, "nbest.txt:1: an n-best line") && !strstr(errs, "lines but"), "%s",
                  errs);
    free(out), free(errs);

    /* intl and char from the command line, named in the signature */
    snprintf(args, sizeof args, "--tokenize char --metric bleu '%s' '%s'", path[0], path[1]);
    ck_assert_int_eq(run_bleu(args, &out, &errs), 0);
    ck_assert_msg(strstr(out, "BLEU = ") && strstr(errs, "|tok:char|"), "%s%s", out, errs);
    free(out), free(errs);
    snprintf(args, sizeof args, "--tokenize intl --metric bleu '%s' '%s'", path[0], path[1]);
    ck_assert_int_eq(run_bleu(args, &out, &errs), 0);
    ck_assert_msg(strstr(errs, "|tok:intl|"), "%s", errs);
    free(out), free(errs);

    /* bad usage */
    snprintf(args, sizeof args, "--tokenize v14 '%s' '%s'", path[0], path[1]);
    ck_assert_int_eq(run_bleu(args, &out, &errs), 2);
    ck_assert_ptr_nonnull(strstr(errs, "rnnsearch bleu: "));
    free(out), free(errs);
    ck_assert_int_eq(run_bleu("", &out, &errs), 2);
    free(out), free(errs);
    /* sacreBLEU's forms: REF alone with the hypothesis on standard input, and
     * -i HYP with every file named a reference; the same scores as HYP REF. */
    snprintf(args, sizeof args, "'%s' '%s'", path[0], path[1]);
    ck_assert_int_eq(run_bleu(args, &out, &errs), 0);
    char *want = out;
    free(errs);
    snprintf(args, sizeof args, "'%s' < '%s'", path[1], path[0]);
    ck_assert_int_eq(run_bleu(args, &out, &errs), 0);
    ck_assert_str_eq(out, want);
    free(out), free(errs);
    snprintf(args, sizeof args, "-i '%s' '%s'", path[0], path[1]);
    ck_assert_int_eq(run_bleu(args, &out, &errs), 0);
    ck_assert_str_eq(out, want);
    free(out), free(errs);
    snprintf(args, sizeof args, "--input '%s' '%s' '%s'", path[0], path[1], path[2]);
    ck_assert_int_eq(run_bleu(args, &out, &errs), 0);
    ck_assert_msg(strstr(out, "BLEU = 48.53 "), "%s", out);
    free(want), free(out), free(errs);
    /* The signatures, with rnnsearch's version; in the score line on request. */
    snprintf(args, sizeof args, "'%s' '%s' '%s'", path[0], path[1], path[2]);
    ck_assert_int_eq(run_bleu(args, &out, &errs), 0);
    ck_assert_msg(
        strstr(errs, "BLEU|nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:rnnsearch-") &&
            strstr(errs, "chrF2|nrefs:2|case:mixed|eff:yes|nc:6|nw:0|space:no|version:rnnsearch-"),
        "%s", errs);
    free(out), free(errs);
    snprintf(args, sizeof args, "--signature --metric bleu '%s' '%s' '%s'", path[0], path[1],
             path[2]);
    ck_assert_int_eq(run_bleu(args, &out, &errs), 0);
    const char *sig = "BLEU|nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:rnnsearch-";
    ck_assert_msg(!strncmp(out, sig, strlen(sig)) &&
                      strstr(out, " = 48.53 82.4/50.0/45.5/37.5 (BP = 0.943"),
                  "%s", out);
    /* Once: in the score line, not on standard error too. */
    ck_assert_msg(!strstr(errs, "nrefs:"), "%s", errs);
    free(out), free(errs);

    /* Sentence scores: one line per segment, BLEU with effective order. */
    char hyp2[600], ref2[600];
    snprintf(hyp2, sizeof hyp2, "%s/hyp2.txt", dir);
    snprintf(ref2, sizeof ref2, "%s/ref2.txt", dir);
    write_file(hyp2, "a dog ran\nhi\n");
    write_file(ref2, "the dog ran\nhi\n");
    snprintf(args, sizeof args, "--sentence '%s' '%s'", hyp2, ref2);
    ck_assert_int_eq(run_bleu(args, &out, &errs), 0);
    const char *first = "BLEU = 55.03 66.7/50.0/50.0/0.0 (BP = 1.000 ratio = 1.000 hyp_len = 3 "
                        "ref_len = 3)\tchrF2 = ";
    ck_assert_msg(!strncmp(out, first, strlen(first)), "%s", out);
    ck_assert_msg(strstr(out,
                         "\nBLEU = 100.00 100.0/0.0/0.0/0.0 (BP = 1.000 ratio = 1.000 hyp_len = 1 "
                         "ref_len = 1)\tchrF2 = 100.00\n"),
                  "%s", out);
    ck_assert_msg(strstr(errs, "BLEU|nrefs:1|case:mixed|eff:yes|"), "%s", errs);
    free(out), free(errs);

    /* An empty reference line is skipped, so segments have different numbers
     * of references: sacreBLEU's signature says nrefs:var. */
    char gap[600];
    snprintf(gap, sizeof gap, "%s/gap.txt", dir);
    write_file(gap, "the dog ran\n\n");
    snprintf(args, sizeof args, "'%s' '%s' '%s'", hyp2, ref2, gap);
    ck_assert_int_eq(run_bleu(args, &out, &errs), 0);
    ck_assert_msg(strstr(errs, "BLEU|nrefs:var|") && strstr(errs, "chrF2|nrefs:var|"), "%s", errs);
    free(out), free(errs);
    snprintf(args, sizeof args, "'%s' '%s' '%s'", hyp2, ref2, ref2);
    ck_assert_int_eq(run_bleu(args, &out, &errs), 0);
    ck_assert_msg(strstr(errs, "BLEU|nrefs:2|"), "%s", errs);
    free(out), free(errs);

    ck_assert_int_eq(run_bleu("--help", &out, &errs), 0);
    ck_assert_ptr_nonnull(strstr(out, "default: both"));
    ck_assert_ptr_nonnull(strstr(out, "default: 13a"));
    free(out), free(errs);

    testdir_remove(dir);
}
END_TEST

Suite *bleu_suite(void)
{
    Suite *s = suite_create("bleu");
    TCase *tc = tcase_create("metrics");
    tcase_add_test(tc, test_perfect_match);
    tcase_add_test(tc, test_no_match);
    tcase_add_test(tc, test_brevity_penalty);
    tcase_add_test(tc, test_hand_worked);
    tcase_add_test(tc, test_clipping_and_exp_smoothing);
    tcase_add_test(tc, test_lowercase);
    tcase_add_test(tc, test_tokenize_13a);
    tcase_add_test(tc, test_tokenize_intl_char);
    tcase_add_test(tc, test_sacrebleu_readme);
    tcase_add_test(tc, test_multiple_references);
    tcase_add_test(tc, test_chrf_hand);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_effective_order);
    tcase_add_test(tc, test_signatures);
    suite_add_tcase(s, tc);
    TCase *cmd = tcase_create("command");
    tcase_set_timeout(cmd, 30);
    tcase_add_test(cmd, test_command);
    suite_add_tcase(s, cmd);
    return s;
}
