/* The command line that continues a training run, as train prints it when it
 * stops: words quoted for a shell. */
#ifndef RS_CLI_RESUME_COMMAND_H
#define RS_CLI_RESUME_COMMAND_H

#include <stdio.h>

/* Writes " " and word to out as one shell word: as it is when it holds only
 * characters no shell treats specially, else in single quotes (an empty word
 * too; a quote inside as '\''). */
void rs_cli_shell_word(FILE *out, const char *word);

/* The command that continues the run of argv[0..argc) in dir ("rnnsearch
 * train … --resume"; --overwrite and --new-data left out, arguments quoted
 * for a shell, a --config that was a pipe replaced by the run's copy). */
void rs_cli_resume_command(FILE *out, int argc, char **argv, int resume, const char *dir);

#endif
