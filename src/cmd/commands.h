/* The subcommands of the rnnsearch program. Each takes the arguments after its
 * name (argv[0] is the subcommand's name), prints its own errors to stderr as
 * "rnnsearch NAME: message", and returns the exit status: 0 success, 1 failure,
 * 2 bad usage. */
#ifndef RS_COMMANDS_H
#define RS_COMMANDS_H

#include "api/rnnsearch.h"

/* One version for the program and the library (librnnsearch.so.1.1.0). */
#define RS_VERSION RNNSEARCH_VERSION

/* Each command's option table (cli/options.h), for the configuration
 * files' check of every command's settings. */
struct rs_cli_command_s;
extern const struct rs_cli_command_s rs_train_command, rs_translate_command, rs_serve_command;

int cmd_train(int argc, char **argv);
int cmd_translate(int argc, char **argv);
int cmd_score(int argc, char **argv);
int cmd_lexicon(int argc, char **argv);
int cmd_aer(int argc, char **argv);
int cmd_align(int argc, char **argv);
int cmd_tokenize(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_bleu(int argc, char **argv);
int cmd_explain(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_average(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_serve(int argc, char **argv);

#endif
