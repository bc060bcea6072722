/* Quality by source length (see bylength.h). */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/chart.h"
#include "common/svg.h"
#include "eval/bylength.h"
#include "eval/segments.h"
#include "text/corpus.h"

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

/* A bucket's lower bound from its name ("<10": 0, "10-19" and ">=60" and
 * "10": their first number, "all": 0), or -1. */
static int lower_of(const char *name)
{
    if (!strcmp(name, "all") || (name[0] == '<' && name[1] >= '0' && name[1] <= '9'))
        return 0;
    if (!strncmp(name, ">=", 2))
        name += 2;
    if (*name < '0' || *name > '9')
        return -1;
    errno = 0;
    char *end;
    long v = strtol(name, &end, 10);
    if (errno || v > INT_MAX || (*end && *end != '-'))
        return -1;
    return (int)v;
}

int rs_length_bucket_is_few(long long sentences)
{
    return sentences > 0 && sentences < RS_LENGTH_FEW;
}

int rs_by_length_read_tsv(const char *path, rs_length_buckets *b, double *bleu,
                          long long *sentences_out, rs_error *err)
{
    rs_lines lines;
    if (rs_lines_read(path, &lines, err))
        return -1;
    memset(b, 0, sizeof *b);
    int status = 0;
    if (lines.count < 2 || strncmp(lines.lines[0], "bucket\tsentences\tbleu\tchrf", 28))
        status = rs_fail(err,
                         "%s:1: not a table of `rnnsearch bleu --by-length --format tsv` "
                         "(bucket, sentences, bleu, chrf)",
                         path);
    for (int i = 1; !status && i < lines.count; i++) {
        char name[64];
        long long sentences;
        char score[32];
        int used = 0;
        if (b->count == RS_LENGTH_BUCKETS_MAX)
            status =
                rs_fail(err, "%s:%d: more than %d buckets", path, i + 1, RS_LENGTH_BUCKETS_MAX);
        else if (sscanf(lines.lines[i], "%63[^\t]\t%lld\t%31[^\t]\t%*[^\t]%n", name, &sentences,
                        score, &used) != 3 ||
                 lines.lines[i][used])
            status =
                rs_fail(err, "%s:%d: not 'bucket<TAB>sentences<TAB>bleu<TAB>chrf'", path, i + 1);
        else {
            const int lower = lower_of(name);
            char *end;
            const double v = strtod(score, &end);
            if (lower < 0 || (b->count == 0 ? lower != 0 : lower <= b->lower[b->count - 1]))
                status = rs_fail(err, "%s:%d: bucket '%s' does not follow the one before", path,
                                 i + 1, name);
            else if (*end || (!isnan(v) && (v < 0 || v > 100)))
                status = rs_fail(err, "%s:%d: BLEU '%s' is not a score from 0 to 100 or nan", path,
                                 i + 1, score);
            else {
                if (sentences_out)
                    sentences_out[b->count] = sentences;
                b->lower[b->count] = lower;
                bleu[b->count++] = v;
            }
        }
    }
    rs_lines_free(&lines);
    return status;
}

/* The figure's frame: buckets evenly along x, BLEU from 0 up along y. */
typedef struct {
    double left, top, width, height, step;
    rs_axis y;
} length_frame;

static double frame_x(const length_frame *f, int bucket)
{
    return f->left + (bucket + 0.5) * f->step;
}

static double frame_y(const length_frame *f, double v)
{
    return f->top + f->height - rs_axis_fraction(&f->y, v) * f->height;
}

/* The first line's sentences per bucket that has them, or NULL. */
static const long long *bucket_sizes(const rs_length_line *lines, int n)
{
    for (int k = 0; k < n; k++)
        if (lines[k].sentences)
            return lines[k].sentences;
    return NULL;
}

/* The grid, ticks, bucket names with their sizes (unless sizes is NULL) and
 * axis titles. */
static void draw_axes(FILE *out, const length_frame *f, const rs_length_buckets *b,
                      const long long *sizes)
{
    for (double v = f->y.lo; v <= f->y.hi + f->y.step * 1e-6; v += f->y.step) {
        char label[32];
        rs_axis_label(label, sizeof label, v, f->y.step);
        fprintf(out,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e4e4e4\"/>\n"
                "<text x=\"%.1f\" y=\"%.1f\" dy=\"0.35em\" text-anchor=\"end\">%s</text>\n",
                f->left, frame_y(f, v), f->left + f->width, frame_y(f, v), f->left - 8,
                frame_y(f, v), label);
    }
    for (int i = 0; i < b->count; i++) {
        char name[32];
        rs_length_bucket_name(b, i, name, sizeof name);
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", frame_x(f, i),
                f->top + f->height + 19);
        rs_xml_escape(out, name);
        fputs("</text>\n", out);
        if (!sizes)
            continue;
        const int few = rs_length_bucket_is_few(sizes[i]);
        fprintf(out,
                "<text class=\"bucket-size%s\" x=\"%.1f\" y=\"%.1f\" font-size=\"11\" "
                "text-anchor=\"middle\" fill=\"%s\">n = %lld%s</text>\n",
                few ? " few" : "", frame_x(f, i), f->top + f->height + 34, few ? "#b00" : "#555",
                sizes[i], few ? ", few" : "");
    }
    fprintf(out,
            "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
            "stroke=\"#444\"/>\n"
            "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">source sentence length "
            "(words)</text>\n"
            "<text transform=\"translate(%.1f %.1f) rotate(-90)\" "
            "text-anchor=\"middle\">BLEU</text>\n",
            f->left, f->top, f->width, f->height, f->left + f->width / 2,
            f->top + f->height + (sizes ? 56 : 42), f->left - 45, f->top + f->height / 2);
}

/* One system: a polyline broken at empty buckets, a marker with a tooltip
 * per bucket (hollow for a bucket of few sentences), and its legend entry
 * at row k under the chart, from legend_y down. */
static void draw_line(FILE *out, const length_frame *f, const rs_length_buckets *b,
                      const rs_length_line *line, int k, double legend_y)
{
    const char *colour = rs_chart_colour(k);
    int open = 0;
    for (int i = 0; i <= b->count; i++) {
        const int point = i < b->count && !isnan(line->bleu[i]);
        if (!point && open)
            fputs("\"/>\n", out);
        else if (point) {
            if (!open)
                fprintf(out, "<polyline fill=\"none\" stroke-width=\"2\" stroke=\"%s\" points=\"",
                        colour);
            fprintf(out, "%s%.1f,%.1f", open ? " " : "", frame_x(f, i), frame_y(f, line->bleu[i]));
        }
        open = point;
    }
    for (int i = 0; i < b->count; i++) {
        if (isnan(line->bleu[i]))
            continue;
        char name[32];
        rs_length_bucket_name(b, i, name, sizeof name);
        const int few = line->sentences && rs_length_bucket_is_few(line->sentences[i]);
        fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" ", frame_x(f, i),
                frame_y(f, line->bleu[i]));
        if (few)
            fprintf(out, "class=\"few\" fill=\"#fff\" stroke=\"%s\" stroke-width=\"1.5\"><title>",
                    colour);
        else
            fprintf(out, "fill=\"%s\"><title>", colour);
        rs_xml_escape(out, line->name);
        fputs(", ", out);
        rs_xml_escape(out, name);
        fprintf(out, " words: BLEU %.2f", line->bleu[i]);
        if (line->sentences)
            fprintf(out, " over %lld sentence%s%s", line->sentences[i],
                    line->sentences[i] == 1 ? "" : "s", few ? " (few)" : "");
        fputs("</title></circle>\n", out);
    }
    const double ly = legend_y + 20.0 * k;
    fprintf(out,
            "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
            "stroke-width=\"2\"/>\n<text x=\"%.1f\" y=\"%.1f\" dy=\"0.35em\" font-size=\"12\" "
            "font-family=\"" RS_SVG_FONTS "\" fill=\"#222\">",
            f->left, ly, f->left + 24, ly, colour, f->left + 30, ly);
    rs_xml_escape(out, line->name);
    fputs("</text>\n", out);
}

int rs_by_length_svg(FILE *out, const rs_length_buckets *b, const rs_length_line *lines, int n,
                     const char *title)
{
    double hi = 0;
    for (int k = 0; k < n; k++)
        for (int i = 0; i < b->count; i++)
            if (!isnan(lines[k].bleu[i]) && lines[k].bleu[i] > hi)
                hi = lines[k].bleu[i];
    const long long *sizes = bucket_sizes(lines, n);
    int any_few = 0;
    for (int k = 0; k < n; k++)
        for (int i = 0; lines[k].sentences && i < b->count; i++)
            any_few |= rs_length_bucket_is_few(lines[k].sentences[i]) && !isnan(lines[k].bleu[i]);
    length_frame f = {.left = 70, .top = 50, .height = 300};
    f.width = 70.0 * (b->count > 6 ? b->count : 6);
    f.step = f.width / b->count;
    f.y = rs_axis_nice(0, hi > 0 ? hi : 1, 1);
    /* The sizes' row pushes the axis title and the legend down. */
    const double legend_y = f.top + f.height + (sizes ? 80 : 66);
    const double bottom = legend_y + 20.0 * n + (any_few ? 20 : 0) - 6;
    if (rs_svg_chart_begin(out, f.left + f.width + 30, bottom, title, f.left + f.width / 2))
        return -1;
    draw_axes(out, &f, b, sizes);
    fputs("</g>\n", out);
    for (int k = 0; k < n; k++)
        draw_line(out, &f, b, &lines[k], k, legend_y);
    if (any_few)
        fprintf(out,
                "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"#fff\" stroke=\"#222\" "
                "stroke-width=\"1.5\"/>\n<text x=\"%.1f\" y=\"%.1f\" dy=\"0.35em\" "
                "font-size=\"12\" font-family=\"" RS_SVG_FONTS "\" fill=\"#222\">a hollow point: "
                "a bucket of fewer than %d sentences, whose BLEU says little</text>\n",
                f.left + 12, legend_y + 20.0 * n, f.left + 30, legend_y + 20.0 * n, RS_LENGTH_FEW);
    return rs_svg_end(out);
}
