/* A test set, segment by segment (see testset.h). */
#include <stddef.h>

#include "eval/testset.h"

void rs_testset_refs(const rs_lines *text, int nrefs, int line, const char **refs)
{
    for (int r = 0; r < nrefs; r++)
        refs[r] = text[r + 1].lines[line];
}

int rs_testset_nrefs(const rs_lines *text, int nrefs, const char **refs)
{
    int common = -1;
    for (int line = 0; line < text[0].count; line++) {
        rs_testset_refs(text, nrefs, line, refs);
        const int n = rs_bleu_nonempty_refs(refs, nrefs);
        if (common >= 0 && n != common)
            return RS_NREFS_VAR;
        common = n;
    }
    return common;
}

int rs_testset_by_length(rs_bucket_stats *stats, const rs_length_buckets *b, const rs_lines *text,
                         int nrefs, const rs_lines *src, const rs_bleu_opts *opts, const char *name,
                         const char **refs, rs_error *err)
{
    rs_error why;
    for (int line = 0; line < text[0].count; line++) {
        rs_testset_refs(text, nrefs, line, refs);
        if (rs_by_length_add(stats, b, src->lines[line], text[0].lines[line], refs, nrefs, opts,
                             &why))
            return rs_fail(err, "%s:%d: %s", name, line + 1, why.msg);
    }
    return 0;
}

int rs_testset_paired_stats(rs_bleu_stats *stats, const rs_testset_systems *in,
                            const rs_bleu_opts *opts, const char **refs, rs_error *err)
{
    const int n = in->text[0].count;
    rs_error why;
    for (int s = 0; s <= in->others; s++)
        for (int line = 0; line < n; line++) {
            rs_testset_refs(in->text, in->nrefs, line, refs);
            const rs_lines *hyp = s ? &in->sys[s - 1] : &in->text[0];
            rs_bleu_stats *st = &stats[(size_t)s * n + line];
            rs_bleu_stats_init(st);
            if (rs_bleu_stats_add(st, hyp->lines[line], refs, in->nrefs, opts, &why) < 0)
                return rs_fail(err, "%s:%d: %s", s ? in->other_names[s - 1] : in->name, line + 1,
                               why.msg);
        }
    return 0;
}
