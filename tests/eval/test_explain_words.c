/* explain -m's tables as a reader sees them: the source words as align shows
 * them (a word out of the vocabulary as written, not <unk>), and columns
 * that line up by display width on de, fr and vi words, whose letters take
 * two or three bytes each. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/svg.h"
#include "testdir.h"
#include "testprog.h"

/* The display column where the first number after the token starts in row
 * `row` ("   j  token   e_ij …"): the row's width up to that number. */
static int column_of_number(const char *row)
{
    const char *p = row;
    while (*p == ' ')
        p++;
    while (*p && *p != ' ') /* j */
        p++;
    while (*p == ' ')
        p++;
    while (*p && *p != ' ') /* the token */
        p++;
    while (*p == ' ')
        p++;
    char prefix[256];
    snprintf(prefix, sizeof prefix, "%.*s", (int)(p - row), row);
    return rs_display_width(prefix);
}

START_TEST(explain_shows_the_words_and_lines_them_up)
{
    char dir[64], path[128], args[1024];
    static char text[65536];
    testdir_make(dir, "rnnsearch-explain-words");
    snprintf(path, sizeof path, "%s/train.tsv", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    for (int i = 0; i < 10; i++)
        fputs("große straße ist schön\tthe big street is nice\n"
              "tiếng việt\tvietnamese\nété à paris\tsummer in paris\n",
              f);
    ck_assert_int_eq(fclose(f), 0);
    snprintf(args, sizeof args,
             "train --train %s --out %s/m --tokenizer space --epochs 2 --batch-size 6 --emb 8 "
             "--hidden 8 --att 6 --maxout 4 --threads 1 --quiet 2>&1",
             path, dir);
    ck_assert_msg(testprog_run(args, text, sizeof text) == 0, "%s", text);
    /* "größte" was never seen: <unk> to the model, "größte" to the reader. */
    const char *sentence = "große größte straße tiếng été";
    char *out, *errs;
    snprintf(args, sizeof args, "explain -m %s/m '%s' --step 1", dir, sentence);
    ck_assert_msg(testprog_run_split(args, &out, &errs) == 0, "%s", errs);
    ck_assert_msg(strstr(out, " x_2 = größte ") && !strstr(out, "<unk>"), "%s", out);
    const char *row = strstr(out, "(model's float32 α)\n");
    ck_assert_ptr_nonnull(row);
    row = strchr(row, '\n') + 1;
    const char *const words[] = {"große", "größte", "straße", "tiếng", "été", "</s>"};
    int column = -1;
    for (int j = 0; j < 6; j++) {
        char line[512];
        const char *end = strchr(row, '\n');
        snprintf(line, sizeof line, "%.*s", (int)(end - row), row);
        ck_assert_msg(strstr(line, words[j]), "row %d: no '%s' in '%s'", j + 1, words[j], line);
        const int c = column_of_number(line);
        if (column < 0)
            column = c;
        ck_assert_msg(c == column, "row %d ('%s'): e_ij at column %d, the first row's at %d\n%s",
                      j + 1, words[j], c, column, out);
        row = end + 1;
    }
    free(out);
    free(errs);
    testdir_remove(dir);
}
END_TEST

Suite *explain_words_suite(void)
{
    Suite *s = suite_create("explain_words");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, explain_shows_the_words_and_lines_them_up);
    suite_add_tcase(s, tc);
    return s;
}
