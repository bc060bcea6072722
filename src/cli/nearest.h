/* Did you mean: the known name nearest to a misspelt one, for the command
 * line (an unknown command, an unknown option) and configuration files (an
 * unknown key or section). Its own module so that both cli.c and
 * config/file.c use it and neither calls the other for it. */
#ifndef RS_CLI_NEAREST_H
#define RS_CLI_NEAREST_H

/* The name in names[0..count) nearest to word by edit distance, when it is
 * near enough to be a likely misspelling (at most a third of its letters, at
 * least 2, differ); else NULL. */
const char *rs_cli_nearest(const char *word, const char *const *names, int count);

#endif
