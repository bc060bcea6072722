/* Shared pieces of the command layer (src/cli/: the program's and the
 * tests', not in the shared library): configuration options generated from the config table,
 * the uniform error and usage conventions, and -m MODEL resolution. */
#ifndef RS_CLI_H
#define RS_CLI_H

#include <getopt.h>
#include <stdio.h>

#include "common/settings.h"
#include "model/codec.h"
#include "data/dataset.h"
#include "model/config.h"
#include "model/locate.h"
#include "model/model.h"
#include "search/pairs_input.h"
#include "search/models.h"
#include "search/ready.h"
#include "search/translate.h"
#include "text/corpus.h"

/* Exit statuses: success, a failure (reported with rs_cli_fail), bad usage
 * (rs_cli_usage_error), and a command ended by signal N (train on SIGINT,
 * SIGTERM, SIGHUP), RS_EXIT_SIGNAL + N as the shell reports it. No command
 * returns a bare number. */
enum { RS_EXIT_OK = 0, RS_EXIT_FAIL = 1, RS_EXIT_USAGE = 2, RS_EXIT_SIGNAL = 128 };

/* Prints "PROG: " and the formatted message on standard error; returns
 * RS_EXIT_FAIL. The one way a command reports a failure that is not bad
 * usage, most often the message of a library call:
 *
 *     if (rs_checkpoint_load(path, &model, NULL, &err))
 *         return rs_cli_fail(PROG, "%s", err.msg);
 */
int rs_cli_fail(const char *prog, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The configuration fields that are options: every rs_config field but the
 * vocabulary sizes (--emb, --batch-size, ...: underscores become dashes). */
#define RS_CLI_MAX_CONFIG_OPTIONS 64

/* Prints "  --name N   help (default: …)" for each configuration option (N for
 * an integer, X for a number, NAME for a name from a list). */
void rs_cli_print_config_help(FILE *out, const rs_config *defaults);

/* Prints the configuration as "key = value" lines, one per field, in the
 * table's order (floats with %g): the form `info` shows. */
void rs_cli_print_config(FILE *out, const rs_config *cfg);


/* ---- One option parser for every command --------------------------------
 *
 * getopt_long with the project's conventions, so that every command treats
 * options alike. Commands do not call it themselves: rs_cli_parse
 * (cli/options.h) runs it over the getopt tables their option table makes.
 *
 * - -h and --help print the command's usage on stdout and exit 0 everywhere:
 *   rs_cli_next adds both (a "help" entry that is listed also comes back as
 *   'h'), so no command may use 'h' otherwise.
 * - Problems are reported by rs_cli_next itself, each in one wording, through
 *   rs_cli_usage_error ("PROG: MESSAGE" then "Try 'PROG --help'.", exit 2):
 *     unknown option '--foo'        (rs_cli_bad_option)
 *     option '--lr' needs a value
 *     option '--quiet' takes no value
 *     --beam given twice            (an option that is not repeatable)
 * - Values are checked by the helpers below, whose messages begin with the
 *   option's name: "PROG: --lr: '-1' is not a number from 0 to 1".
 * - A command that writes a file takes it as -o/--output FILE.
 */
#define RS_CLI_BAD (-2)
#define RS_CLI_MAX_OPTIONS 128

/* The values of a getopt table: an option with a letter (-m/--model) has the
 * letter as its value, every other long option RS_CLI_OPT + its row's index,
 * above every letter; --config FILE is RS_CLI_CONFIG. */
enum { RS_CLI_OPT = 1000 };
/* The value of a command's {"config", required_argument, NULL, RS_CLI_CONFIG}:
 * rs_cli_next takes the path itself (refusing a second one) and never returns
 * it; rs_cli_apply_config applies the file. */
#define RS_CLI_CONFIG 9000

typedef struct {
    const char *prog;
    int argc;
    char **argv;
    char shortopts[64];                             /* ":" + the command's + "h" */
    struct option longopts[RS_CLI_MAX_OPTIONS + 2]; /* the command's + help */
    unsigned char seen[RS_CLI_MAX_OPTIONS + 2];     /* longopts[i] given on the command line */
    int too_many;                                   /* internal: the table did not fit */
    const char *config_path;                        /* --config FILE */
    rs_settings config;                             /* its settings, until rs_cli_end */
    /* Checks a value without keeping it, as rs_cli_apply would report it (a
     * --config value the command line overrides), or NULL: only a flag's
     * true/false is checked. */
    int (*check)(void *ctx, int val, const char *arg);
    /* rs_cli_parse's (cli/options.h): the command's rows, settings expanded,
     * the request they fill, and each row's last value ("" for a flag). */
    const struct rs_cli_option *rows;
    int n_rows;
    const struct rs_cli_command_s *cmd;
    void *rq;
    const char *given[RS_CLI_MAX_OPTIONS + 2];
} rs_cli_args;

void rs_cli_begin(rs_cli_args *args, const char *prog, int argc, char **argv, const char *shortopts,
                  const struct option *longopts);

/* The configuration table's options (train's model and training settings):
 * how many, and the i-th's long option name and configuration key. */
int rs_cli_config_option_count(void);
void rs_cli_config_option(int i, const char **option, const char **field);

/* Where the value being applied came from ("FILE:LINE"), which the option
 * helpers' messages then name; NULL: the command line. */
void rs_cli_set_origin(const char *file, int line);

/* The next option's value (optarg set as by getopt_long), 'h' for -h/--help,
 * RS_CLI_BAD after reporting a problem, or -1 when the options end. */
int rs_cli_next(rs_cli_args *args);

/* Prints "PROG: " and the formatted message, then "Try 'PROG --help'.";
 * returns RS_EXIT_USAGE. */
int rs_cli_usage_error(const char *prog, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Between these two, rs_cli_usage_error prints each problem without its
 * "Try" line and counts it: a configuration file's every problem is reported
 * in one pass. rs_cli_collect_end prints, when there were any, how many (in
 * `file`) and the "Try" line once, and returns RS_EXIT_USAGE; else -1. */
void rs_cli_collect_begin(void);
int rs_cli_collect_end(const char *prog, const char *file);

/* Reports "PROG: unknown option 'ARG'" as rs_cli_usage_error; returns RS_EXIT_USAGE. */
int rs_cli_bad_option(const char *prog, const char *arg);

/* Whether --name was given on the command line. */
int rs_cli_seen(const rs_cli_args *args, const char *name);

/* Stores value in *slot unless the option was given before; otherwise
 * reports "PROG: OPT given twice" and returns -1. */
int rs_cli_once(const char *prog, const char *opt, const char **slot, const char *value);

/* ---- Configuration files: --config FILE ---------------------------------
 *
 * A configuration file holds a command's long options under their names with
 * '_' for '-' (batch_size for --batch-size), each in its section:
 *
 *     data:        {train: pairs.tsv, dev: dev.tsv}       train
 *     model:       {emb: 256, hidden: 256}                 train
 *     training:    {batch_size: 64, epochs: 10}            train
 *     translation: {beam: 5}                               translate
 *     serve:       {port: 8080}                            serve
 *
 * (or "key = value" lines, the older form, without sections). A command
 * applies the sections it has options for, through the same function that
 * applies its command-line options, and leaves the others' to them; an
 * unknown section or key is an error naming file, line and the nearest known
 * name. Options given on the command line win wherever they stand: the file's
 * setting of such an option is not applied, nor those of the options in its
 * group (--train stands for src and tgt). The table of what a file may hold,
 * for every command, is in src/cli/cli.c. */
/* What a command does with one option (val as rs_cli_next returns it) and its
 * value (NULL for a flag), from the command line and from the file alike:
 * -1 to go on, else the exit status after reporting the problem through
 * rs_cli_usage_error or the helpers below, whose messages begin with the file
 * and line ("run.yaml:3: --lr: …") while a file's setting is applied. */
typedef int (*rs_cli_apply)(void *ctx, int val, const char *arg);

/* A setting a configuration file may hold: an option row of a command's
 * table (cli/options.h) with a section. */
typedef struct {
    const char *command, *section;
    char option[64]; /* the long option: "batch-size" */
    int group, repeatable;
} rs_cli_setting;

/* Gives the i-th setting of every command into *out; 0 past the last. The
 * option tables' (rs_cli_setting_at) are handed to the file's checker, which
 * knows no table itself. */
typedef int (*rs_cli_settings_at)(int i, rs_cli_setting *out);

/* After the command line: reads --config FILE (when given), checks every
 * setting against all commands' (settings_at) and applies those of
 * `command` ("train", "translate", "serve") that the command line did not
 * give. Returns -1 to go on, else the exit status (reported). The file's
 * values stay valid until rs_cli_end. */
int rs_cli_apply_config(rs_cli_args *args, const char *command, rs_cli_settings_at settings_at,
                        rs_cli_apply apply, void *ctx);

/* The model a configuration file trains (training: out, else name), for
 * translate and serve without -m; NULL when it names none. */
const char *rs_cli_config_model(const rs_cli_args *args);

/* Frees what rs_cli_apply_config read. */
void rs_cli_end(rs_cli_args *args);

/* Parses a whole decimal integer in [min, max]; on failure reports
 * "PROG: OPT: 'ARG' is not an integer from MIN to MAX" and returns -1. */
int rs_cli_int(const char *prog, const char *opt, const char *arg, int min, int max, int *out);

/* Parses a finite number in [min, max]; on failure reports
 * "PROG: OPT: 'ARG' is not a number from MIN to MAX" and returns -1. */
int rs_cli_double(const char *prog, const char *opt, const char *arg, double min, double max,
                  double *out);

/* 1 when s ends with suffix (a file name's ".svg", a directory's trailing
 * "/"), else 0. */
int rs_cli_ends_with(const char *s, const char *suffix);

/* Sets *out to the index of arg in names[0..count); otherwise reports
 * "PROG: OPT: 'ARG' is not one of A, B or C" and returns -1. */
int rs_cli_choice(const char *prog, const char *opt, const char *arg, const char *const *names,
                  int count, int *out);

/* --remove-bpe[=MARKER]: *marker is arg, or RS_BPE_MARKER without one; an
 * empty marker, or "sentencepiece" (translate decodes that itself), is reported and
 * returns -1. */
int rs_cli_bpe_marker(const char *prog, const char *arg, const char **marker);

/* Whether a word after --remove-bpe is its value (fairseq's names and marks:
 * @@, "@@ ", subword_nmt, sentencepiece) rather than the next argument:
 * "--remove-bpe @@" as fairseq takes it, while "--remove-bpe FILE" reads FILE. */
int rs_cli_bpe_value(const char *arg);


/* Resolves a -m argument (file, models/NAME directory or NAME), loads the
 * model ready to decode (weights only, with the transposed copies that every
 * decoding road uses: search/ready.h) and, when codec is not NULL, its text
 * codec. */
int rs_cli_load_model(const char *model_arg, rs_ready *model, rs_codec *codec, rs_error *err);

/* Records one -m argument (refusing more than RS_MAX_MODELS). */
int rs_cli_add_model(const char *prog, rs_models *m, const char *arg);

/* After the options of a command that reads pairs (score, lexicon: their
 * RS_CLI_PAIRS_ROWS, cli/options.h): one TSV file as the operand ("-",
 * standard input, without one), or --src and --tgt; -1 to go on, else the
 * exit status. */
int rs_cli_pairs_finish(const char *prog, rs_pairs_input *in, int argc, char **argv);

#endif
