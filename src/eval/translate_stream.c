#include <stdlib.h>
#include <string.h>

#include "eval/alignment.h"
#include "eval/translate_stream.h"

void rs_translate_stream_init(rs_translate_stream *s)
{
    memset(s, 0, sizeof *s);
    rs_bleu_stats_init(&s->bleu);
    rs_chrf_stats_init(&s->chrf);
}

/* The printed form of one hypothesis (a new string). */
static int format_hypothesis(const rs_stream_style *st, const rs_translated *t,
                             const rs_hypothesis *h, char **line, rs_error *err)
{
    if (!(*line = strdup(h->text ? h->text : "")))
        return rs_fail(err, "out of memory");
    if (st->alignment && t->source_count > 0)
        return rs_alignment_append_marian(line, h->alignment, h->count + 1, t->source_count + 1,
                                          st->alignment == 2, st->align_threshold, err);
    return 0;
}

/* Prints the translations of `count` lines (n-best lists, alignments) and
 * adds them to the BLEU and chrF statistics against the references. */
static int write_results(rs_translate_stream *s, const char *name, const rs_translated *results,
                         int count, rs_error *err)
{
    const rs_stream_style *st = &s->style;
    for (int i = 0; i < count; i++, s->line_no++) {
        const rs_translated *t = &results[i];
        if (t->truncated && s->warn)
            fprintf(s->warn, "%s: %s:%ld: source cut to its first %d tokens (%d more)\n", s->prog,
                    name, s->line_no + 1, t->source_count, t->truncated);
        s->tokens_out += t->hyps[0].count;
        for (int r = 0; r < (st->nbest_format && t->count > 1 ? t->count : 1); r++) {
            char *text;
            if (format_hypothesis(st, t, &t->hyps[r], &text, err))
                return -1;
            if (st->nbest_format)
                fprintf(s->out, "%ld ||| %s ||| F0= %.6f ||| %.6f\n", s->line_no, text,
                        t->hyps[r].logprob, t->hyps[r].score);
            else
                fprintf(s->out, "%s\n", text);
            free(text);
        }
        if (!s->ref_path)
            continue;
        if (s->line_no >= s->refs->count)
            return rs_fail(err, "%s has fewer lines (%d) than the input", s->ref_path,
                           s->refs->count);
        const char *hyp = t->hyps[0].text ? t->hyps[0].text : "";
        const char *ref = s->refs->lines[s->line_no];
        if (rs_bleu_stats_add(&s->bleu, hyp, &ref, 1, NULL, err) ||
            rs_chrf_stats_add(&s->chrf, hyp, &ref, 1, NULL, err))
            return -1;
    }
    return 0;
}

/* Up to `chunk` lines into lines[] (copies): the first waits, the others are
 * taken only while ready. Returns the count, or -1; *rc is the reader's last
 * answer (1 while lines may follow). */
static int read_chunk(rs_line_reader *reader, char **lines, int chunk, int *rc, rs_error *err)
{
    int count = 0;
    char *line;
    size_t len;
    while (count < chunk && (count == 0 || rs_line_reader_ready(reader)) &&
           (*rc = rs_line_reader_next(reader, &line, &len, err)) == 1) {
        if (!(lines[count] = strdup(line)))
            return rs_fail(err, "out of memory");
        count++;
    }
    return *rc < 0 ? -1 : count;
}

/* Translates and prints `count` lines, then flushes. */
static int translate_chunk(rs_translate_stream *s, rs_translator *tr, const char *name,
                           char **lines, int count, rs_translated *results, rs_error *err)
{
    rs_error inner;
    if (rs_translate_lines(tr, count, (const char *const *)lines, results, &inner))
        return rs_fail(err, "%s (lines %ld-%ld): %s%s", name, s->line_no + 1, s->line_no + count,
                       inner.msg, tr->batch_too_large ? "; a smaller --batch-size takes less" : "");
    int written = write_results(s, name, results, count, err);
    for (int i = 0; i < count; i++)
        rs_translated_free(&results[i]);
    if (written)
        return -1;
    if (s->flush)
        return s->flush(s->flush_ctx, err);
    return fflush(s->out) ? rs_fail(err, "cannot write the translations") : 0;
}

int rs_translate_stream_run(rs_translate_stream *s, rs_translator *tr, rs_line_reader *reader,
                            int batch_size, rs_error *err)
{
    const int chunk = 16 * batch_size;
    char **lines = rs_calloc((size_t)chunk, sizeof(char *), err);
    rs_translated *results = rs_calloc((size_t)chunk, sizeof *results, err);
    int status = -1, rc = 1;
    while (lines && results && rc == 1) {
        const int count = read_chunk(reader, lines, chunk, &rc, err);
        if (count < 0 ||
            (count > 0 && translate_chunk(s, tr, reader->name, lines, count, results, err)))
            break;
        for (int i = 0; i < count; i++) {
            free(lines[i]);
            lines[i] = NULL;
        }
        if (rc != 1)
            status = 0;
    }
    for (int i = 0; lines && i < chunk; i++)
        free(lines[i]);
    free(lines);
    for (int i = 0; results && i < chunk; i++)
        rs_translated_free(&results[i]);
    free(results);
    return status;
}

int rs_translate_stream_check_refs(const rs_translate_stream *s, rs_error *err)
{
    if (s->ref_path && s->line_no != s->refs->count)
        return rs_fail(err, "%s has %d line%s but the input has %ld", s->ref_path, s->refs->count,
                       RS_S(s->refs->count), s->line_no);
    return 0;
}

void rs_translate_stream_scores(const rs_translate_stream *s, FILE *f)
{
    rs_bleu_result b;
    rs_chrf_result cr;
    char text[256];
    rs_bleu_compute(&s->bleu, &b);
    rs_bleu_format(&b, text, sizeof text);
    fprintf(f, "%s\n", text);
    rs_chrf_compute(&s->chrf, &cr);
    rs_chrf_format(&cr, text, sizeof text);
    fprintf(f, "%s\n", text);
}

int rs_stream_alignment(const char *arg, rs_stream_style *st)
{
    if (!strcmp(arg, "soft") || !strcmp(arg, "hard")) {
        st->alignment = !strcmp(arg, "soft") ? 2 : 1;
        return 1;
    }
    char *end = NULL;
    const double x = strtod(arg, &end);
    if (*end || end == arg || !(x > 0.0 && x <= 1.0))
        return 0;
    st->alignment = 1;
    st->align_threshold = (float)x;
    return 1;
}
