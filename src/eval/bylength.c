/* Quality by source length (see bylength.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/bylength.h"
#include "eval/segments.h"

void rs_length_buckets_default(rs_length_buckets *b)
{
    memset(b, 0, sizeof *b);
    b->count = 7;
    for (int i = 0; i < b->count; i++)
        b->lower[i] = 10 * i;
}

int rs_length_buckets_parse(rs_length_buckets *b, const char *spec, rs_error *err)
{
    memset(b, 0, sizeof *b);
    b->count = 1;
    for (const char *p = spec;;) {
        if (*p < '0' || *p > '9')
            return rs_fail(err,
                           "buckets '%s': bounds are whole numbers separated by commas, "
                           "as 10,20,30",
                           spec);
        errno = 0;
        char *end;
        long v = strtol(p, &end, 10);
        if (errno || v > INT_MAX || v <= b->lower[b->count - 1])
            return rs_fail(err, "buckets '%s': bounds increase from 1 (%.*s)", spec, (int)(end - p),
                           p);
        if (b->count == RS_LENGTH_BUCKETS_MAX)
            return rs_fail(err, "buckets '%s': at most %d bounds", spec, RS_LENGTH_BUCKETS_MAX - 1);
        b->lower[b->count++] = (int)v;
        if (!*end)
            return 0;
        if (*end != ',')
            return rs_fail(err,
                           "buckets '%s': bounds are whole numbers separated by commas, "
                           "as 10,20,30",
                           spec);
        p = end + 1;
    }
}

int rs_length_bucket_of(const rs_length_buckets *b, int words)
{
    int i = b->count - 1;
    while (i > 0 && words < b->lower[i])
        i--;
    return i;
}

int rs_length_bucket_name(const rs_length_buckets *b, int i, char *buf, size_t size)
{
    if (i == b->count - 1)
        return i == 0 ? snprintf(buf, size, "all") : snprintf(buf, size, ">=%d", b->lower[i]);
    if (i == 0)
        return snprintf(buf, size, "<%d", b->lower[1]);
    if (b->lower[i + 1] - 1 == b->lower[i])
        return snprintf(buf, size, "%d", b->lower[i]);
    return snprintf(buf, size, "%d-%d", b->lower[i], b->lower[i + 1] - 1);
}

void rs_bucket_stats_init(rs_bucket_stats *stats, const rs_length_buckets *b)
{
    memset(stats, 0, (size_t)b->count * sizeof *stats);
}

int rs_by_length_add(rs_bucket_stats *stats, const rs_length_buckets *b, const char *source,
                     const char *hyp, const char *const *refs, int nrefs, const rs_bleu_opts *opts,
                     rs_error *err)
{
    if (!source)
        return rs_fail(err, "a segment needs its source to be put in a bucket");
    int words;
    if (rs_word_count(source, &words, err))
        return -1;
    rs_bucket_stats *s = &stats[rs_length_bucket_of(b, words)];
    if (rs_bleu_stats_add(&s->bleu, hyp, refs, nrefs, opts, err) ||
        rs_chrf_stats_add(&s->chrf, hyp, refs, nrefs, opts, err))
        return -1;
    s->sentences++;
    return 0;
}
