/* common/settings.c: a configuration file as settings, each with its
 * section, key, values and lines; what is refused, naming the file and the
 * line. (What the command line makes of the settings is cli/test_cli_config.c's.) */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common/settings.h"
#include "testdir.h"
#include "text/settings_file.h"

static int parse(const char *text, rs_settings *s, rs_error *err)
{
    return rs_settings_parse("c.yaml", (const unsigned char *)text, strlen(text), s, err);
}

START_TEST(nested_mappings_become_dotted_keys_of_their_section)
{
    rs_settings s;
    rs_error err;
    ck_assert_msg(!parse("model:\n"
                         "  encoder:\n"
                         "    hidden_size: 64\n"
                         "    rnn: {type: gru}\n"
                         "  emb: 8\n",
                         &s, &err),
                  "%s", err.msg);
    const rs_setting *it = rs_settings_find(&s, "model", "encoder.hidden_size");
    ck_assert_ptr_nonnull(it);
    ck_assert_str_eq(it->values[0], "64");
    ck_assert_int_eq(it->line, 3);
    it = rs_settings_find(&s, "model", "encoder.rnn.type");
    ck_assert(it && !strcmp(it->values[0], "gru") && it->line == 4);
    ck_assert_ptr_nonnull(rs_settings_find(&s, "model", "emb"));
    /* The nesting is in the key, not a section of its own. */
    ck_assert_ptr_null(rs_settings_find(&s, "encoder", "hidden_size"));
    ck_assert_ptr_null(rs_settings_find(&s, NULL, "emb"));
    rs_settings_free(&s);
}
END_TEST

START_TEST(top_level_keys_have_no_section_and_an_empty_section_is_a_blank_value)
{
    rs_settings s;
    rs_error err;
    ck_assert_msg(!parse("save_model: run/m\nlayers: [1, 2]\nmodel:\n", &s, &err), "%s", err.msg);
    ck_assert(s.yaml);
    const rs_setting *it = rs_settings_find(&s, NULL, "save_model");
    ck_assert(it && it->section == NULL && it->count == 1 && !it->is_list);
    ck_assert_str_eq(it->values[0], "run/m");
    it = rs_settings_find(&s, NULL, "layers");
    ck_assert(it && it->is_list && it->count == 2);
    ck_assert_str_eq(it->values[0], "1");
    ck_assert_str_eq(it->values[1], "2");
    ck_assert_int_eq(it->value_lines[1], 2);
    it = rs_settings_find(&s, NULL, "model");
    ck_assert(it && it->count == 1 && !strcmp(it->values[0], ""));
    rs_settings_free(&s);
}
END_TEST

START_TEST(key_value_lines_take_several_items_a_line_and_comments)
{
    rs_settings s;
    rs_error err;
    ck_assert_msg(!parse("# a comment\nemb=8 hidden = 16\n\nlr = 0.5 # why\n", &s, &err), "%s",
                  err.msg);
    ck_assert(!s.yaml);
    ck_assert_int_eq(s.count, 3);
    const rs_setting *it = rs_settings_find(&s, NULL, "hidden");
    ck_assert(it && it->line == 2 && !strcmp(it->values[0], "16"));
    it = rs_settings_find(&s, NULL, "lr");
    ck_assert(it && it->line == 4 && !strcmp(it->values[0], "0.5"));
    rs_settings_free(&s);

    /* '#' starts a comment only at a line's start or after a blank, as in YAML. */
    ck_assert_msg(!parse("out = run#1 # the first\ntrain = a#b.tsv\n#emb = 4\n", &s, &err), "%s",
                  err.msg);
    ck_assert_int_eq(s.count, 2);
    it = rs_settings_find(&s, NULL, "out");
    ck_assert(it && !strcmp(it->values[0], "run#1"));
    it = rs_settings_find(&s, NULL, "train");
    ck_assert(it && !strcmp(it->values[0], "a#b.tsv"));
    rs_settings_free(&s);

    ck_assert(parse("emb = 8\nhidden\n", &s, &err));
    ck_assert_str_eq(err.msg, "c.yaml:2: 'hidden' is not key = value");
    ck_assert_int_eq(s.count, 0);
}
END_TEST

/* A line ends at \n, \r\n or a lone \r in both forms (docs/guarantees.md):
 * a comment on a line that ends in a lone CR ends at that CR, not at the next
 * \n, and the settings and their line numbers are those of the \n file. */
START_TEST(every_line_end_reads_the_same)
{
    static const char *const ends[] = {"\n", "\r\n", "\r"};
    for (int e = 0; e < 3; e++) {
        for (int yaml = 0; yaml < 2; yaml++) {
            char text[256];
            const char *end = ends[e];
            if (yaml)
                snprintf(text, sizeof text, "model: # sizes%s  emb: 8%s  hidden: 16%s", end, end,
                         end);
            else
                snprintf(text, sizeof text, "max_steps = 2 # few%semb = 8%shidden = 16%s", end, end,
                         end);
            rs_settings s;
            rs_error err;
            ck_assert_msg(!parse(text, &s, &err), "%s", err.msg);
            const rs_setting *emb = rs_settings_find(&s, yaml ? "model" : NULL, "emb"),
                             *hidden = rs_settings_find(&s, yaml ? "model" : NULL, "hidden");
            ck_assert_msg(emb && hidden, "line end %d, %s: a setting lost", e,
                          yaml ? "YAML" : "key = value");
            ck_assert(!strcmp(emb->values[0], "8") && !strcmp(hidden->values[0], "16"));
            ck_assert_int_eq(emb->line, 2);
            ck_assert_int_eq(hidden->line, 3);
            rs_settings_free(&s);
        }
        /* A bad byte's line counts the same line ends. */
        static const unsigned char head[] = "model:";
        unsigned char bad[64];
        size_t n = 0;
        memcpy(bad, head, sizeof head - 1), n = sizeof head - 1;
        for (int line = 0; line < 2; line++) {
            memcpy(bad + n, ends[e], strlen(ends[e]));
            n += strlen(ends[e]);
        }
        memcpy(bad + n, "  e\0mb: 3", 9), n += 9;
        rs_settings s;
        rs_error err;
        ck_assert(rs_settings_parse("c.yaml", bad, n, &s, &err));
        ck_assert_str_eq(err.msg, "c.yaml:3: a NUL byte (a configuration file is text)");
    }
}
END_TEST

START_TEST(a_key_given_twice_is_read_last_a_section_twice_ends_the_reading)
{
    rs_settings s;
    rs_error err;
    /* As PyYAML: the last value, at its place; the earlier one gone, noted. */
    ck_assert_msg(!parse("model:\n  emb: 3\n  hidden: 4\n  emb: 5\n", &s, &err), "%s", err.msg);
    ck_assert_int_eq(s.count, 2);
    ck_assert(!strcmp(s.items[1].key, "emb") && !strcmp(s.items[1].values[0], "5"));
    ck_assert(!s.items[0].problem && !s.items[1].problem);
    ck_assert_msg(s.notes && strstr(s.notes, "c.yaml:4: 'emb' given again in model: (first on "
                                             "line 2)"),
                  "%s", s.notes ? s.notes : "(none)");
    rs_settings_free(&s);

    ck_assert(parse("model:\n  emb: 3\ntraining:\n  lr: 1\nmodel:\n  hidden: 4\n", &s, &err));
    ck_assert_str_eq(err.msg, "c.yaml:5: section 'model' given twice (first on line 1)");
}
END_TEST

START_TEST(text_only_a_nul_or_bad_utf8_names_its_line_a_bom_is_skipped)
{
    rs_settings s;
    rs_error err;
    static const unsigned char nul[] = "model:\n  emb: 3\n  hid\0den: 4\n";
    ck_assert(rs_settings_parse("c.yaml", nul, sizeof nul - 1, &s, &err));
    ck_assert_str_eq(err.msg, "c.yaml:3: a NUL byte (a configuration file is text)");
    ck_assert(parse("model:\n  emb: 3\n  name: \xC3\x28\n", &s, &err));
    ck_assert_str_eq(err.msg, "c.yaml:3: not UTF-8 (byte 0xc3)");
    ck_assert_msg(!parse("\xEF\xBB\xBFmodel:\n  emb: 3\n", &s, &err), "%s", err.msg);
    ck_assert_ptr_nonnull(rs_settings_find(&s, "model", "emb"));
    rs_settings_free(&s);
    /* Not YAML at all: libyaml's problem, with the line. */
    ck_assert(parse("model: [1, 2\n", &s, &err));
    ck_assert_msg(!strncmp(err.msg, "c.yaml:", 7), "%s", err.msg);
}
END_TEST

START_TEST(reading_a_file_names_it_and_bounds_its_size)
{
    char dir[128], path[256];
    testdir_make(dir, "settings");
    rs_settings s;
    rs_error err;
    testfile_put(dir, "run.yaml", "training:\n  lr: 0.25\n");
    snprintf(path, sizeof path, "%s/run.yaml", dir);
    ck_assert_msg(!rs_settings_read(path, &s, &err), "%s", err.msg);
    const rs_setting *it = rs_settings_find(&s, "training", "lr");
    ck_assert(it && !strcmp(it->values[0], "0.25") && it->line == 2);
    rs_settings_free(&s);

    snprintf(path, sizeof path, "%s/missing.yaml", dir);
    ck_assert(rs_settings_read(path, &s, &err));
    ck_assert_msg(strstr(err.msg, path), "%s", err.msg);

    /* One byte over the bound, in lines of 1 kB, is refused at the line that
     * crosses it, before anything is parsed. */
    const size_t big = (size_t)RS_SETTINGS_MAX_BYTES + 1;
    unsigned char *data = malloc(big);
    ck_assert_ptr_nonnull(data);
    memset(data, '#', big);
    for (size_t i = 1023; i < big; i += 1024)
        data[i] = '\n';
    snprintf(path, sizeof path, "%s/big.yaml", dir);
    testfile_write(path, data, big);
    free(data);
    ck_assert(rs_settings_read(path, &s, &err));
    char expect[512];
    snprintf(expect, sizeof expect,
             "%s:1025: more than %d bytes: a configuration file is at most that", path,
             RS_SETTINGS_MAX_BYTES);
    ck_assert_str_eq(err.msg, expect);
    testdir_remove(dir);
}
END_TEST

/* A configuration file is read by the line reader every text input takes:
 * gzip is decompressed, a BOM and CR LF line ends read as in any corpus, and
 * a NUL byte is refused naming its line. */
START_TEST(a_file_is_read_by_the_one_line_reader)
{
    char dir[128], path[256];
    testdir_make(dir, "settings-reader");
    rs_settings s;
    rs_error err;
    const char *text = "\xEF\xBB\xBFtraining:\r\n  lr: 0.25\r\n  epochs: 3\r";
    snprintf(path, sizeof path, "%s/run.yaml.gz", dir);
    gzFile gz = gzopen(path, "wb");
    ck_assert_ptr_nonnull(gz);
    ck_assert_int_eq(gzwrite(gz, text, (unsigned)strlen(text)), (int)strlen(text));
    ck_assert_int_eq(gzclose(gz), Z_OK);
    ck_assert_msg(!rs_settings_read(path, &s, &err), "%s", err.msg);
    const rs_setting *lr = rs_settings_find(&s, "training", "lr");
    const rs_setting *epochs = rs_settings_find(&s, "training", "epochs");
    ck_assert(lr && !strcmp(lr->values[0], "0.25") && lr->line == 2);
    ck_assert(epochs && !strcmp(epochs->values[0], "3") && epochs->line == 3);
    rs_settings_free(&s);

    snprintf(path, sizeof path, "%s/nul.yaml", dir);
    testfile_write(path, (const unsigned char *)"training:\n  lr: 0\0.25\n", 23);
    ck_assert(rs_settings_read(path, &s, &err));
    char expect[512];
    snprintf(expect, sizeof expect, "%s:2: NUL byte at byte 8", path);
    ck_assert_str_eq(err.msg, expect);
    testdir_remove(dir);
}
END_TEST

/* What rs_settings_write_pair writes reads back as the value it was given:
 * plain where that is safe, quoted and escaped where YAML would read
 * something else (a comment, an alias, a line break, a byte order mark). */
START_TEST(a_written_pair_reads_back_as_its_value)
{
    static const char *const values[] = {"data/train.tsv",
                                         "a: b #c.tsv",
                                         "*d",
                                         "#@ ",
                                         "-x",
                                         ".x",
                                         "tab\there",
                                         "q\"uote\\",
                                         "\x01"
                                         "ctl",
                                         "sep\xE2\x80\xA8line",
                                         "par\xE2\x80\xA9",
                                         "\xC2\x85nel",
                                         "\xEF\xBB\xBF"
                                         "bom",
                                         "gr\xC3\xBC\xC3\x9F"
                                         "e",
                                         ""};
    enum { N = sizeof values / sizeof *values };
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    ck_assert_ptr_nonnull(f);
    fputs("data:\n", f);
    for (int i = 0; i < N; i++) {
        char key[16];
        snprintf(key, sizeof key, "k%d", i);
        rs_settings_write_pair(f, key, values[i]);
    }
    ck_assert_int_eq(fclose(f), 0);
    ck_assert_ptr_nonnull(strstr(text, "  k0: data/train.tsv\n"));
    rs_settings s;
    rs_error err;
    ck_assert_msg(!parse(text, &s, &err), "%s in\n%s", err.msg, text);
    for (int i = 0; i < N; i++) {
        char key[16];
        snprintf(key, sizeof key, "k%d", i);
        const rs_setting *it = rs_settings_find(&s, "data", key);
        ck_assert_msg(it && it->count == 1, "%s", key);
        ck_assert_str_eq(it->values[0], values[i]);
    }
    rs_settings_free(&s);
    free(text);
}
END_TEST

Suite *settings_suite(void)
{
    Suite *s = suite_create("settings");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, nested_mappings_become_dotted_keys_of_their_section);
    tcase_add_test(tc, top_level_keys_have_no_section_and_an_empty_section_is_a_blank_value);
    tcase_add_test(tc, key_value_lines_take_several_items_a_line_and_comments);
    tcase_add_test(tc, every_line_end_reads_the_same);
    tcase_add_test(tc, a_key_given_twice_is_read_last_a_section_twice_ends_the_reading);
    tcase_add_test(tc, text_only_a_nul_or_bad_utf8_names_its_line_a_bom_is_skipped);
    tcase_add_test(tc, reading_a_file_names_it_and_bounds_its_size);
    tcase_add_test(tc, a_file_is_read_by_the_one_line_reader);
    tcase_add_test(tc, a_written_pair_reads_back_as_its_value);
    suite_add_tcase(s, tc);
    return s;
}
