/* Did you mean: the known name nearest to a misspelt one, as the command
 * line (an unknown command, an unknown option) and configuration files (an
 * unknown key or section) suggest it. */
#ifndef RS_NEAREST_H
#define RS_NEAREST_H

/* The name in names[0..count) nearest to word by edit distance, when it is
 * near enough to be a likely misspelling (at most a third of its letters, at
 * least 2, differ); else NULL. */
const char *rs_nearest(const char *word, const char *const *names, int count);

#endif
