/* Did you mean: the nearest known name by edit distance (nearest.h). */
#include <string.h>

#include "common/nearest.h"

/* Levenshtein distance, for names of a few dozen letters. */
static int edit_distance(const char *a, const char *b)
{
    int row[128];
    const int n = (int)strlen(b);
    if (n >= 127 || strlen(a) >= 127)
        return 1 << 20;
    for (int j = 0; j <= n; j++)
        row[j] = j;
    for (int i = 1; a[i - 1]; i++) {
        int diagonal = row[0];
        row[0] = i;
        for (int j = 1; j <= n; j++) {
            const int up = row[j];
            const int change = diagonal + (a[i - 1] != b[j - 1]);
            row[j] = change < up + 1 ? change : up + 1;
            if (row[j - 1] + 1 < row[j])
                row[j] = row[j - 1] + 1;
            diagonal = up;
        }
    }
    return row[n];
}

const char *rs_nearest(const char *word, const char *const *names, int count)
{
    const char *best = NULL;
    int best_d = 0, limit = (int)strlen(word) / 3;
    if (limit < 2)
        limit = 2;
    for (int i = 0; i < count; i++) {
        const int d = edit_distance(word, names[i]);
        if (d <= limit && (!best || d < best_d))
            best = names[i], best_d = d;
    }
    return best;
}
