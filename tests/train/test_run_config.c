/* A run's configuration as a YAML file (src/train/run_config.c): every
 * setting in its section, flags as true/false, floats in their shortest
 * exact form, the data paths and translation: settings of the run's own
 * --config file when there is one, lines to fill in otherwise. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/run_config.h"

static char *yaml_of(const rs_config *cfg, const rs_settings *copy)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(rs_run_config_write(f, "m/best.ckpt", cfg, copy), 0);
    ck_assert_int_eq(fclose(f), 0);
    return text;
}

START_TEST(settings_go_to_their_sections)
{
    rs_config cfg;
    rs_config_defaults(&cfg);
    cfg.model.hidden = 24;
    cfg.model.lowercase = 1;
    cfg.train.lr = 0.002f;
    const rs_settings none = {0};
    char *y = yaml_of(&cfg, &none);
    ck_assert_msg(!strncmp(y, "# The configuration of m/best.ckpt: ", 36), "%s", y);
    const char *data = strstr(y, "\ndata:\n"), *model = strstr(y, "\nmodel:\n");
    const char *training = strstr(y, "\ntraining:\n"), *translation = strstr(y, "\ntranslation:\n");
    ck_assert_msg(data && model && training && translation && data < model && model < training &&
                      training < translation,
                  "%s", y);
    /* The data files to fill in; each key in its own section. */
    ck_assert_msg(strstr(data, "  # train: PAIRS.tsv") < model, "%s", y);
    ck_assert_msg(strstr(y, "  lowercase: true\n") < model, "%s", y);
    ck_assert_msg(strstr(y, "  hidden: 24\n") > model && strstr(y, "  hidden: 24\n") < training,
                  "%s", y);
    ck_assert_msg(strstr(y, "  lr: 0.002\n") > training, "%s", y); /* not 0.00200000009 */
    ck_assert_msg(!strstr(y, "src_vocab:"), "%s", y);
    ck_assert_msg(strstr(translation, "  beam: 1\n"), "%s", y);
    free(y);
}
END_TEST

START_TEST(the_runs_own_file_gives_its_paths_and_translation)
{
    rs_config cfg;
    rs_config_defaults(&cfg);
    rs_settings copy = {0};
    rs_error err;
    ck_assert_int_eq(rs_settings_add(&copy, "data", "train", "corpus/pairs.tsv", 1, &err), 0);
    ck_assert_int_eq(rs_settings_add(&copy, "translation", "beam", "5", 2, &err), 0);
    char *y = yaml_of(&cfg, &copy);
    ck_assert_msg(strstr(y, "  # the files of the --config file this run was started with\n"
                            "  train: corpus/pairs.tsv\n"),
                  "%s", y);
    ck_assert_msg(!strstr(y, "# train: PAIRS.tsv"), "%s", y);
    ck_assert_msg(strstr(strstr(y, "translation:\n"), "  beam: 5\n"), "%s", y);
    free(y);
    rs_settings_free(&copy);
}
END_TEST

Suite *run_config_suite(void)
{
    Suite *s = suite_create("run_config");
    TCase *tc = tcase_create("yaml");
    tcase_add_test(tc, settings_go_to_their_sections);
    tcase_add_test(tc, the_runs_own_file_gives_its_paths_and_translation);
    suite_add_tcase(s, tc);
    return s;
}
