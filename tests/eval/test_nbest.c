/* Moses n-best lines told from translations (src/eval/nbest.c). */
#include <check.h>
#include <string.h>

#include "eval/nbest.h"

START_TEST(shapes)
{
    static const struct {
        const char *line;
        int nbest;
    } cases[] = {
        {"0 ||| das haus ||| F0= -1.234567 ||| -0.617284", 1},
        {"12|||x|||F0=-1|||-3e-2", 1},
        {"3 ||| ||| F0= -0.5 ||| -0.5", 1},                      /* an empty translation */
        {"0 ||| a b ||| LM0= -3 TM0= -1 ||| -4 ||| 0-0 1-1", 1}, /* Moses with alignment */
        {"the house is small", 0},
        {"a ||| b ||| c ||| d", 0},        /* no id */
        {"0 ||| b ||| c ||| high", 0},     /* no score */
        {"0 ||| b ||| c", 0},              /* three fields */
        {"-1 ||| b ||| c ||| 2", 0},       /* an id is not negative */
        {"0 ||| b ||| c ||| 2 points", 0}, /* the score field is a number only */
        {"", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        ck_assert_msg(rs_nbest_line(cases[i].line) == cases[i].nbest, "'%s': want %d",
                      cases[i].line, cases[i].nbest);
}
END_TEST

/* translate --alignment's lines (Marian's "text ||| links"): hard links,
 * soft rows, none; a translation that merely holds "|||" is not one. */
START_TEST(alignment_lines)
{
    static const struct {
        const char *line;
        int aligned;
    } cases[] = {
        {"2026-11-21 ||| 0-0 1-1 2-3", 1},
        {"das haus ||| 0.25,0.75 1,0", 1},
        {"x ||| 1e-3,0.999", 1},
        {"---- ||| ", 1}, /* no link above the threshold */
        {" ||| 0-0", 1},  /* an empty translation */
        {"a ||| b", 0},   /* words after the bars */
        {"a ||| 0-0 b", 0},
        {"a ||| 0-0 ||| 1-1", 0}, /* two bars: not this form */
        {"0 ||| x ||| F0= -1 ||| -1", 0},
        {"plain text", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        ck_assert_msg(rs_alignment_line(cases[i].line) == cases[i].aligned, "'%s': want %d",
                      cases[i].line, cases[i].aligned);
    const char *lines[] = {"plain", "2026 ||| 0-0"};
    rs_error err = {{0}};
    ck_assert_int_eq(rs_nbest_refuse(lines, 2, "hyp.txt", &err), -1);
    ck_assert_msg(!strncmp(err.msg, "hyp.txt:2: a translation with its alignment", 43), "%s",
                  err.msg);
}
END_TEST

START_TEST(refusal_names_the_line)
{
    const char *lines[] = {"a plain line", "another", "7 ||| x ||| F0= -1 ||| -1",
                           "0 ||| y ||| F0= -1 ||| -1"};
    rs_error err = {{0}};
    ck_assert_int_eq(rs_nbest_refuse(lines, 2, "hyp.txt", &err), 0);
    ck_assert_int_eq(rs_nbest_refuse(lines, 4, "hyp.txt", &err), -1);
    ck_assert_msg(!strncmp(err.msg, "hyp.txt:3: an n-best line", 25), "%s", err.msg);
}
END_TEST

Suite *nbest_suite(void)
{
    Suite *s = suite_create("nbest");
    TCase *tc = tcase_create("nbest");
    tcase_add_test(tc, shapes);
    tcase_add_test(tc, refusal_names_the_line);
    tcase_add_test(tc, alignment_lines);
    suite_add_tcase(s, tc);
    return s;
}
