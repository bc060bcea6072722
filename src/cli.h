/* Shared pieces of the command layer: configuration options generated from
 * the config table, and the uniform error and usage conventions. */
#ifndef RS_CLI_H
#define RS_CLI_H

#include <getopt.h>
#include <stdio.h>

#include "codec.h"
#include "dataset.h"
#include "config.h"
#include "model.h"

/* Exit statuses. */
enum { RS_EXIT_OK = 0, RS_EXIT_FAIL = 1, RS_EXIT_USAGE = 2 };

/* Long options for every configuration field except the vocabulary sizes
 * (--emb, --batch-size, ... : underscores become dashes), appended to opts
 * (which must have room for RS_CLI_MAX_CONFIG_OPTIONS more, and is kept
 * NULL-terminated); each gets val = first_val + its index. */
#define RS_CLI_MAX_CONFIG_OPTIONS 64
int rs_cli_add_config_options(struct option *opts, int count, int first_val);

/* Applies option `val` (from rs_cli_add_config_options) with its argument. */
int rs_cli_set_config(rs_config *cfg, int val, int first_val, const char *arg, rs_error *err);

/* Prints "  --name VALUE   help (default: …)" for each configuration option. */
void rs_cli_print_config_help(FILE *out, const rs_config *defaults);

/* Whether --name was given on the command line (for resuming). */
const char *rs_cli_config_name(int val, int first_val);

/* Prints "PROG: " and the formatted message, then "Try 'PROG --help'.";
 * returns RS_EXIT_USAGE. */
int rs_cli_usage_error(const char *prog, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prints "PROG: unknown option or missing value: ARG" and a pointer to
 * --help; returns RS_EXIT_USAGE. */
int rs_cli_bad_option(const char *prog, const char *arg);

/* Parses a whole decimal integer in [min, max]; on failure prints
 * "PROG: OPT: 'ARG' is not an integer from MIN to MAX" and returns -1. */
int rs_cli_int(const char *prog, const char *opt, const char *arg, int min, int max, int *out);

/* Resolves a -m argument (file, models/NAME directory or NAME), loads the
 * model (weights only) and, when codec is not NULL, its text codec. */
int rs_cli_load_model(const char *model_arg, rs_model *model, rs_codec *codec, rs_error *err);

/* The translation pipeline's source-length rule for pairs (rs_cut_sources),
 * with a warning on stderr naming each pair cut ("PROG: FILE: pair N: …"). */
int rs_cli_cut_sources(const char *prog, rs_tokenized *tok, int max_src_len, const char *name,
                       rs_error *err);

#endif
