/* A run's configuration as a YAML file (run_config.h). */
#include <stdlib.h>
#include <string.h>

#include "search/translate.h"
#include "text/settings_file.h"
#include "train/run_config.h"

/* The settings of one section from rs_config_write's "key=value" lines:
 * flags as true/false, floats in their shortest form that reads back the
 * same. */
static void write_section(FILE *out, char *text, const char *section)
{
    for (char *line = text; line && *line;) {
        char *eol = strchr(line, '\n'), *eq = strchr(line, '=');
        if (eol)
            *eol = 0;
        if (eq) {
            *eq = 0;
            const char *v = eq + 1;
            char shortest[32], *end;
            float f;
            if (rs_config_is_flag(line))
                v = !strcmp(v, "1") ? "true" : "false";
            else if (strpbrk(v, ".e") && (f = strtof(v, &end), !*end)) {
                /* 0.002 rather than 0.00200000009 when both are the same float */
                snprintf(shortest, sizeof shortest, "%g", (double)f);
                if (strtof(shortest, NULL) == f)
                    v = shortest;
            }
            if (strcmp(line, "src_vocab") && strcmp(line, "tgt_vocab") &&
                !strcmp(rs_config_section(line), section))
                fprintf(out, "  %s: %s\n", line, v);
            *eq = '=';
        }
        if (eol)
            *eol = '\n';
        line = eol ? eol + 1 : NULL;
    }
}

/* data: the run's files when the copy of its --config file names them (the
 * paths as training was given them, from the directory it ran in), else
 * lines to fill in. */
static void write_data_paths(FILE *out, const rs_settings *copy)
{
    static const char *const keys[] = {"train", "src", "tgt", "dev", "dev_src", "dev_tgt"};
    int named = 0;
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        const rs_setting *it = rs_settings_find(copy, "data", keys[i]);
        if (it && it->count == 1 && !it->is_list) {
            if (!named++)
                fprintf(out, "  # the files of the --config file this run was started with\n");
            rs_settings_write_pair(out, keys[i], it->values[0]);
        }
    }
    if (!named)
        fprintf(out, "  # train: PAIRS.tsv          (or src: FILE and tgt: FILE)\n"
                     "  # dev: DEV.tsv              (or dev_src: FILE and dev_tgt: FILE)\n");
}

/* translation: translate's defaults, or what the run's file set. */
static void write_translation(FILE *out, const rs_settings *copy)
{
    rs_translate_options opt;
    rs_translate_options_default(&opt);
    char values[6][32];
    snprintf(values[0], sizeof values[0], "%d", opt.beam);
    snprintf(values[1], sizeof values[1], "%.1f", (double)opt.length_penalty);
    snprintf(values[2], sizeof values[2], "%d", opt.batch_size);
    snprintf(values[3], sizeof values[3], "%d", opt.max_src_len);
    snprintf(values[4], sizeof values[4], "%s", opt.replace_unk ? "true" : "false");
    snprintf(values[5], sizeof values[5], "%s", opt.remove_bpe ? "true" : "false");
    static const char *const keys[] = {"beam",        "length_penalty", "batch_size",
                                       "max_src_len", "replace_unk",    "remove_bpe"};
    fprintf(out, "translation:\n");
    for (int i = 0; i < 6; i++) {
        const rs_setting *it = rs_settings_find(copy, "translation", keys[i]);
        rs_settings_write_pair(out, keys[i],
                               it && it->count == 1 && !it->is_list ? it->values[0] : values[i]);
    }
}

int rs_run_config_write(FILE *out, const char *path, const rs_config *cfg, const rs_settings *copy)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem)
        return -1;
    rs_config_write(cfg, mem);
    if (fclose(mem))
        return -1;
    fprintf(out,
            "# The configuration of %s: 'rnnsearch train --config FILE' repeats its\n"
            "# training bit for bit, given the data it was trained on and the same\n"
            "# --threads (a checkpoint records its data's fingerprint, not its files).\n",
            path);
    static const char *const order[] = {"data", "model", "training"};
    for (int k = 0; k < 3; k++) {
        fprintf(out, "%s:\n", order[k]);
        if (k == 0)
            write_data_paths(out, copy);
        if (k == 2)
            fprintf(out, "  # out: DIR                  (or name: NAME)\n");
        write_section(out, text, order[k]);
    }
    write_translation(out, copy);
    free(text);
    return 0;
}
