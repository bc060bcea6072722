/* A command's options as one table: each row says an option's name, letter,
 * field, kind, range, help and configuration section once, and the getopt
 * parsing, --help, the --config keys and the check of a file's overridden
 * values are all drawn from it (the man pages and completions are drawn from
 * --help). As Marian's cli.add<int>("--beam-size,-b", "…", 12) or argparse's
 * add_argument, written as data; a row starts with name, letter, kind, field,
 * min, max, value name, in that order, and names the rest:
 *
 *     #define RQ translate_request
 *     static const rs_cli_option option_table[] = {
 *         {"beam", 'b', RS_CLI_INT, RS_AT(RQ, topt.beam), 1, RS_MAX_BEAM, "K",
 *          .section = "translation", .help = "beam search with K hypotheses (default: %D)"},
 *         {"quiet", .kind = RS_CLI_FLAG, RS_AT(RQ, quiet), .help = "no summary line"},
 *         RS_CLI_HELP_ROW,
 *         {0},
 *     };
 *
 * Adding an option is adding its row (and the field it fills). What no row
 * can say, a rule across options, stays in the command (its check_request).
 * A file's key is the option's name with '_' for '-' in the row's section;
 * the defaults are what the request holds before parsing, and a help text's
 * "%D" is replaced by the row's default (or by what .describe writes). A
 * file's value that the command line overrides is checked by storing it into
 * a scratch copy of the request: .set and .parse write into the request only. */
#ifndef RS_CLI_OPTIONS_H
#define RS_CLI_OPTIONS_H

#include <stddef.h>
#include <stdio.h>

#include "cli/cli.h"

/* The offset of a request's member: a row's .at. */
#define RS_AT(type, member) offsetof(type, member)

typedef enum {
    RS_CLI_END,        /* ends the table */
    RS_CLI_TEXT,       /* no option: .help is a paragraph of --help; with .label, an
                          option line (an option described twice) */
    RS_CLI_HELP,       /* -h/--help */
    RS_CLI_FLAG,       /* an int field set to 1 */
    RS_CLI_INT,        /* an int field, a whole number in [min, max] */
    RS_CLI_FLOAT,      /* a float field, a finite number in [min, max] */
    RS_CLI_STRING,     /* a const char * field */
    RS_CLI_CHOICE,     /* an int field: the value's index in .names */
    RS_CLI_CALL,       /* .set parses the value into the request */
    RS_CLI_PARSE,      /* .parse parses the value into the field (a type of its own) */
    RS_CLI_MODELS,     /* an rs_models * field: -m MODEL, repeatable (rs_cli_add_model) */
    RS_CLI_SETTINGS,   /* rows for each rs_config field (train's model and training) */
    RS_CLI_CONFIG_FILE /* --config FILE */
} rs_cli_kind;

enum {
    RS_CLI_REPEAT = 1,   /* may be given again, each time adding a value (and RS_CLI_LIST) */
    RS_CLI_OPTIONAL = 2, /* --name[=VALUE]: the value may be left out (arg NULL) */
    RS_CLI_LIST = 4,     /* a file's YAML list gives one value an item */
};

typedef struct rs_cli_option {
    const char *name; /* "beam": --beam, and the file's key beam; NULL for text */
    int letter;       /* 'm' for -m, or 0 */
    rs_cli_kind kind;
    size_t at;           /* RS_AT(request, member): the field the value goes to */
    double min, max;     /* RS_CLI_INT and RS_CLI_FLOAT */
    const char *value;   /* the value's name in --help ("K"); NULL for a flag */
    const char *label;   /* --help's left column when not "-m, --model MODEL" */
    const char *help;    /* lines split by '\n'; a first empty line puts them below the label */
    const char *section; /* the --config file's section, or NULL: command line only */
    unsigned flags;      /* RS_CLI_REPEAT, RS_CLI_OPTIONAL, RS_CLI_LIST */
    int group;           /* nonzero: options that stand for each other in a file */
    /* RS_CLI_CALL: stores arg (NULL for a flag) into rq; -1 to go on, else
     * the exit status after reporting the problem (rs_cli_usage_error). */
    int (*set)(void *rq, const char *arg);
    /* RS_CLI_PARSE: as rs_cli_int, stores arg into field; 0, or -1 after
     * reporting "PROG: OPT: ..." (rs_cli_usage_error). */
    int (*parse)(const char *prog, const char *opt, const char *arg, void *field);
    const char *const *names; /* RS_CLI_CHOICE: the values, ending with NULL */
    /* RS_CLI_OPTIONAL: whether the next word is this option's value
     * ("--alignment soft" as well as "--alignment=soft"). */
    int (*takes)(const char *word);
    /* What "%D" stands for, when not the field's default. */
    void (*describe)(char *text, size_t size);
} rs_cli_option;

/* Rows several commands share. */
/* clang-format off */
#define RS_CLI_HELP_ROW {"help", 'h', RS_CLI_HELP, .help = "this help"}
/* --src FILE --tgt FILE and --swap, into the rs_pairs_input `member` of a request. */
#define RS_CLI_PAIRS_ROWS(type, member)                                                            \
    {"src", .kind = RS_CLI_STRING, RS_AT(type, member.src), .value = "FILE",                       \
     .label = "--src FILE, --tgt FILE", .help = "line-aligned source and target files"},           \
    {"tgt", .kind = RS_CLI_STRING, RS_AT(type, member.tgt), .value = "FILE"},                      \
    {"swap", .kind = RS_CLI_FLAG, RS_AT(type, member.swap),                                        \
     .help = "exchange source and target of a TSV file"}
/* clang-format on */

/* One command: its table and the text around it in --help. */
typedef struct rs_cli_command_s {
    const char *name;     /* "translate": whose settings a --config file gives */
    const char *prog;     /* "rnnsearch translate" */
    const char *synopsis; /* --help before the options: "usage: …" and what it does */
    const char *epilog;   /* --help after them, or NULL */
    int column;           /* where the options' help text starts */
    size_t size;          /* sizeof the request: a scratch copy checks a file's overridden values */
    const rs_cli_option *options;
} rs_cli_command;

/* Every command (cmd/main.c's list, set once): a configuration file is
 * checked against all their settings, and applied for the one that reads it. */
void rs_cli_set_commands(const rs_cli_command *const *commands, int count);

/* Parses the command line into rq (which holds the defaults), then the
 * --config file's settings for what the command line did not give (those it
 * did give are checked all the same); prints --help. Returns -1 to go on
 * (operands at argv[optind..]), else the exit status (reported). args holds
 * the file's values until rs_cli_end. */
int rs_cli_parse(const rs_cli_command *cmd, void *rq, rs_cli_args *args, int argc, char **argv);

/* The --help text, defaults read from `defaults` (a request before parsing). */
void rs_cli_help(FILE *out, const rs_cli_command *cmd, const void *defaults);

/* Whether option `name` was given (command line or file), and its last value
 * ("" for a flag); NULL when not given. */
const char *rs_cli_given(const rs_cli_args *args, const char *name);

/* Records option `name` as given with value (an option that stands for
 * another: train's --remove-bpe is --post-process bpe). */
void rs_cli_set_given(rs_cli_args *args, const char *name, const char *value);

/* The i-th setting of every command's --config rows (rs_cli_settings_at,
 * cli.h), or 0 past the last: what rs_cli_parse gives the file's checker. */
int rs_cli_setting_at(int i, rs_cli_setting *out);

#endif
