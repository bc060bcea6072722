/* Alignment matrices written out: Marian's suffix of a translation, and the
 * formats of `rnnsearch align` (text grid, TSV, JSON, Pharaoh links, SVG,
 * HTML) with the table that names them (docs/alignment.md). Shapes as in
 * alignment.c: rows = target tokens + </s>, cols = source tokens + </s>;
 * w[i·cols + j] row-major. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/svg.h"
#include "eval/alignment.h"
#include "text/text.h"

static int write_links(FILE *out, const float *w, int rows, int cols, float threshold,
                       rs_error *err)
{
    rs_link *links;
    int count;
    if (rs_alignment_hard(w, rows, cols, threshold, &links, &count, err))
        return -1;
    for (int k = 0; k < count; k++)
        fprintf(out, "%s%d-%d", k ? " " : "", links[k].src, links[k].tgt);
    free(links);
    return 0;
}

int rs_alignment_append_marian(char **line, const float *w, int rows, int cols, int soft,
                               float threshold, rs_error *err)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    if (!f)
        return rs_fail(err, "out of memory");
    fprintf(f, "%s |||", *line);
    if (soft) {
        for (int i = 0; i < rows; i++) {
            putc(' ', f);
            for (int j = 0; j < cols; j++)
                fprintf(f, "%s%.6g", j ? "," : "", w[(size_t)i * cols + j]);
        }
    } else {
        putc(' ', f);
        if (write_links(f, w, rows, cols, threshold, err)) {
            fclose(f);
            free(buf);
            return -1;
        }
    }
    if (ferror(f) | fclose(f)) {
        free(buf);
        return rs_fail(err, "out of memory");
    }
    /* An empty hard alignment leaves "text ||| " as Marian does. */
    free(*line);
    *line = buf;
    return 0;
}

/* ---- formats ---- */

static int finish(FILE *out)
{
    return ferror(out) ? -1 : 0;
}

static int clamp_level(float w, int levels)
{
    int k = (int)lrintf(w * (float)(levels - 1));
    return k < 0 ? 0 : k >= levels ? levels - 1 : k;
}

/* One glyph of a vertical column head: a code point with the zero-width
 * ones that follow it. */
typedef struct {
    const char *s;
    int bytes, width;
} glyph;

enum { HEAD_MAX = 14 };

/* Splits s into at most HEAD_MAX glyphs (the last "…" when cut); returns the count. */
static int split_glyphs(const char *s, glyph *g)
{
    int n = 0;
    char one[8];
    while (*s) {
        size_t len = 1;
        while (len < 4 && s[len] && ((unsigned char)s[len] & 0xC0) == 0x80)
            len++;
        memcpy(one, s, len);
        one[len] = '\0';
        int w = rs_display_width(one);
        if (w == 0 && n > 0) {
            g[n - 1].bytes += (int)len;
        } else {
            if (n == HEAD_MAX) {
                g[HEAD_MAX - 1] = (glyph){"\xE2\x80\xA6", 3, 1};
                return n;
            }
            g[n++] = (glyph){s, (int)len, w ? w : 1};
        }
        s += len;
    }
    return n;
}

static void spaces(FILE *out, int n)
{
    for (int k = 0; k < n; k++)
        putc(' ', out);
}

/* Labels as pictures show them (text, svg, html): the joiner marks of the word
 * tokenizer ("￭," "￭-￭", see text.h) dropped, so that people read "," and "-";
 * the data formats keep the tokens exactly. */
typedef struct {
    int rows, cols;
    char **tgt, **src;
} display;

static char *display_label(const char *token)
{
    size_t n = strlen(token), k = strlen(RS_JOINER);
    const char *s = token;
    if (strcmp(token, "<" RS_JOINER ">")) {
        if (n > k && !strncmp(s, RS_JOINER, k))
            s += k, n -= k;
        if (n > k && !strcmp(s + n - k, RS_JOINER))
            n -= k;
    }
    char *c = malloc(n + 1);
    if (c) {
        memcpy(c, s, n);
        c[n] = '\0';
    }
    return c;
}

static void display_free(display *d)
{
    rs_alignment_free_labels(d->tgt, d->rows);
    rs_alignment_free_labels(d->src, d->cols);
}

static int display_make(display *d, const rs_alignment *a)
{
    d->rows = a->rows;
    d->cols = a->cols;
    d->tgt = calloc((size_t)a->rows, sizeof(char *));
    d->src = calloc((size_t)a->cols, sizeof(char *));
    int ok = d->tgt && d->src;
    for (int i = 0; ok && i < a->rows; i++)
        ok = (d->tgt[i] = display_label(a->tgt[i])) != NULL;
    for (int j = 0; ok && j < a->cols; j++)
        ok = (d->src[j] = display_label(a->src[j])) != NULL;
    if (!ok)
        display_free(d);
    return ok ? 0 : -1;
}

/* Coverage below the matrix: a row "Σα" with each column's mark (↓ below
 * RS_COVERAGE_LOW, ↑ above RS_COVERAGE_HIGH; with cells of 5 columns the
 * number itself), then every source word with its Σ_i α_ij. */
static int write_coverage_text(FILE *out, const rs_alignment *a, const display *d, int label_w,
                               int cw)
{
    double *cov = malloc(sizeof *cov * (size_t)a->cols);
    if (!cov)
        return -1;
    rs_alignment_coverage(a, cov);
    fputs("\xCE\xA3\xCE\xB1", out); /* Σα */
    spaces(out, label_w - 2 + 1);
    for (int j = 0; j < a->cols; j++) {
        const int mark = rs_alignment_coverage_mark(a, cov, j);
        if (cw >= 5)
            fprintf(out, "%5.2f", cov[j]);
        else
            fputs(mark < 0 ? "\xE2\x86\x93 " : mark > 0 ? "\xE2\x86\x91 " : "  ", out);
    }
    fputs("\ncoverage \xCE\xA3_i \xCE\xB1_ij:", out);
    for (int j = 0; j < a->cols; j++) {
        const int mark = rs_alignment_coverage_mark(a, cov, j);
        fprintf(out, " %s %.2f%s", d->src[j], cov[j],
                mark < 0   ? "\xE2\x86\x93"
                : mark > 0 ? "\xE2\x86\x91"
                           : "");
    }
    fprintf(out,
            "\n(\xE2\x86\x93 below %.1f: barely attended, under-translated?  \xE2\x86\x91 "
            "above %.0f: attended past %.0f times, over-translated?)\n",
            RS_COVERAGE_LOW, RS_COVERAGE_HIGH, RS_COVERAGE_HIGH);
    free(cov);
    return 0;
}

/* The column heads, written downwards, one glyph per line, centred in cells
 * of cw columns after the labels' label_w. */
static int write_heads_text(FILE *out, const rs_alignment *a, const display *d, int label_w, int cw)
{
    glyph(*heads)[HEAD_MAX] = calloc((size_t)a->cols, sizeof *heads);
    int *head_len = calloc((size_t)a->cols, sizeof(int)), height = 0;
    if (!heads || !head_len) {
        free(heads);
        free(head_len);
        return -1;
    }
    for (int j = 0; j < a->cols; j++) {
        head_len[j] = split_glyphs(d->src[j], heads[j]);
        if (head_len[j] > height)
            height = head_len[j];
    }
    for (int k = 0; k < height; k++) {
        spaces(out, label_w + 1);
        int pending = 0; /* spaces owed, written only before a glyph (no trailing blanks) */
        for (int j = 0; j < a->cols; j++) {
            if (k >= head_len[j]) {
                pending += cw;
                continue;
            }
            const glyph *g = &heads[j][k];
            int left = (cw - g->width) / 2;
            spaces(out, pending + (left > 0 ? left : 0));
            fwrite(g->s, 1, (size_t)g->bytes, out);
            pending = cw - g->width - (left > 0 ? left : 0);
            if (pending < 0)
                pending = 0;
        }
        putc('\n', out);
    }
    free(heads);
    free(head_len);
    return 0;
}

/* A row per target word: its label, then a cell per source word (a glyph
 * of the weight's band, its number, or a grey, as flags ask). */
static void write_rows_text(FILE *out, const rs_alignment *a, const display *d, int label_w,
                            int flags)
{
    static const char *const blocks[] = {"  ", "\xE2\x96\x91\xE2\x96\x91",
                                         "\xE2\x96\x92\xE2\x96\x92", "\xE2\x96\x93\xE2\x96\x93",
                                         "\xE2\x96\x88\xE2\x96\x88"};
    const int numbers = flags & RS_ALIGN_NUMBERS, color = flags & RS_ALIGN_COLOR;
    for (int i = 0; i < a->rows; i++) {
        fputs(d->tgt[i], out);
        spaces(out, label_w - rs_display_width(d->tgt[i]) + 1);
        for (int j = 0; j < a->cols; j++) {
            const float w = a->w[(size_t)i * a->cols + j];
            if (color) {
                /* The 24 greys of the 256-colour palette, 232 (black = 0) to 255 (white = 1). */
                int grey = 232 + clamp_level(w, 24);
                fprintf(out, "\x1b[48;5;%dm", grey);
                if (numbers)
                    fprintf(out, "\x1b[38;5;%dm%5.2f", grey < 244 ? 255 : 232, w);
                else
                    fputs("  ", out);
                fputs("\x1b[0m", out);
            } else if (numbers) {
                fprintf(out, "%5.2f", w);
            } else {
                fputs(blocks[clamp_level(w, 5)], out);
            }
        }
        putc('\n', out);
    }
}

/* What a cell's shade or glyph means (numbers need no legend). */
static void write_legend_text(FILE *out, int flags)
{
    if (flags & RS_ALIGN_COLOR) {
        /* The colour bar: the 24 greys in order, 0 (black) to 1 (white), one
         * cell each, so each shade is a band of 1/24 ≈ .042 of weight. */
        fputs("\xCE\xB1 = 0 ", out);
        for (int k = 0; k < 24; k++)
            fprintf(out, "\x1b[48;5;%dm \x1b[0m", 232 + k);
        fputs(" 1  (grey = weight, linear; each shade a band of 1/24)\n", out);
    } else if (!(flags & RS_ALIGN_NUMBERS)) {
        /* The glyphs' legend: each glyph is the band of weights it stands for. */
        fputs("(\xE2\x96\x91 \xE2\x89\xA5 .125  \xE2\x96\x92 \xE2\x89\xA5 .375  "
              "\xE2\x96\x93 \xE2\x89\xA5 .625  \xE2\x96\x88 \xE2\x89\xA5 .875)\n",
              out);
    }
}

static int write_text(FILE *out, const rs_alignment *a, const display *d, int flags)
{
    const int cw = flags & RS_ALIGN_NUMBERS ? 5 : 2; /* cell width in terminal columns */
    int label_w = 0;
    for (int i = 0; i < a->rows; i++) {
        int w = rs_display_width(d->tgt[i]);
        if (w > label_w)
            label_w = w;
    }
    if (write_heads_text(out, a, d, label_w, cw))
        return -1;
    write_rows_text(out, a, d, label_w, flags);
    if (write_coverage_text(out, a, d, label_w, cw))
        return -1;
    write_legend_text(out, flags);
    putc('\n', out);
    return finish(out);
}

int rs_alignment_write_text(FILE *out, const rs_alignment *a, int flags)
{
    display d;
    if (display_make(&d, a))
        return -1;
    int rc = write_text(out, a, &d, flags);
    display_free(&d);
    return rc;
}

/* A TSV field: backslash, tab, newline and CR escaped as \\ \t \n \r. */
static void tsv_field(FILE *out, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '\\': fputs("\\\\", out); break;
        case '\t': fputs("\\t", out); break;
        case '\n': fputs("\\n", out); break;
        case '\r': fputs("\\r", out); break;
        default: putc(*s, out);
        }
    }
}

int rs_alignment_write_tsv_header(FILE *out)
{
    fputs("sentence\ttgt_index\ttgt_token\tsrc_index\tsrc_token\tweight\n", out);
    return finish(out);
}

int rs_alignment_write_tsv(FILE *out, const rs_alignment *a, int index)
{
    for (int i = 0; i < a->rows; i++)
        for (int j = 0; j < a->cols; j++) {
            fprintf(out, "%d\t%d\t", index, i);
            tsv_field(out, a->tgt[i]);
            fprintf(out, "\t%d\t", j);
            tsv_field(out, a->src[j]);
            fprintf(out, "\t%.6f\n", a->w[(size_t)i * a->cols + j]);
        }
    return finish(out);
}

int rs_alignment_write_json(FILE *out, const rs_alignment *a, int index)
{
    fprintf(out, "{\"id\":%d,\"source\":", index);
    rs_json_write_strings(out, (const char *const *)a->src, a->cols);
    fputs(",\"target\":", out);
    rs_json_write_strings(out, (const char *const *)a->tgt, a->rows);
    fputs(",\"alignment\":[", out);
    for (int i = 0; i < a->rows; i++) {
        fputs(i ? ",[" : "[", out);
        for (int j = 0; j < a->cols; j++) {
            float w = a->w[(size_t)i * a->cols + j];
            fprintf(out, "%s%.9g", j ? "," : "", isfinite(w) ? w : 0.0f);
        }
        putc(']', out);
    }
    fputs("]}\n", out);
    return finish(out);
}

int rs_alignment_write_pharaoh(FILE *out, const rs_alignment *a, float threshold)
{
    rs_error err;
    if (write_links(out, a->w, a->rows, a->cols, threshold, &err))
        return -1;
    putc('\n', out);
    return finish(out);
}

/* "#rrggbb" grey of weight w: white = 1, black = 0. */
static void grey_hex(char hex[8], float w)
{
    int g = clamp_level(w, 256);
    snprintf(hex, 8, "#%02x%02x%02x", g, g, g);
}

/* "source → target: 0.123" for a cell's tooltip, escaped. */
static void cell_title(FILE *out, const rs_alignment *a, const display *d, int i, int j)
{
    rs_xml_escape(out, d->src[j]);
    fputs(" \xE2\x86\x92 ", out);
    rs_xml_escape(out, d->tgt[i]);
    fprintf(out, ": %.3f", a->w[(size_t)i * a->cols + j]);
}

/* The colour bar of every matrix picture: the one scale (grey = α, black 0,
 * white 1, linear, as grey_hex) from 0 at the bottom to 1 at the top, in
 * COLORBAR_STEPS bands of grey_hex's own colours, with ticks every 0.25.
 * Its own <g class="colorbar">, after the cells, without the font-family
 * and shape-rendering of the matrix's groups, so that the explorer's
 * selectors of labels and cells (serve_page.html) do not see it. x, y: its
 * top left corner; h: its height. */
#define COLORBAR_STEPS 64
#define COLORBAR_W 12.0
static void svg_colorbar(FILE *out, double x, double y, double h, double font)
{
    fputs("<g class=\"colorbar\">\n", out);
    fprintf(out,
            "<text x=\"%.1f\" y=\"%.1f\" font-family=\"" RS_SVG_FONTS "\" font-size=\"%.0f\">"
            "\xCE\xB1</text>\n",
            x, y - 4, font);
    const double band = h / COLORBAR_STEPS;
    for (int k = 0; k < COLORBAR_STEPS; k++) {
        char hex[8];
        grey_hex(hex, (k + 0.5f) / COLORBAR_STEPS);
        fprintf(out,
                "<rect x=\"%.1f\" y=\"%.2f\" width=\"%.0f\" height=\"%.2f\" fill=\"%s\" "
                "shape-rendering=\"crispEdges\"/>\n",
                x, y + h - (k + 1) * band, COLORBAR_W, band + 0.05, hex);
    }
    fprintf(out,
            "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.0f\" height=\"%.1f\" fill=\"none\" "
            "stroke=\"#808080\" stroke-width=\"1\"/>\n",
            x, y, COLORBAR_W, h);
    for (int t = 0; t <= 4; t++) {
        const double ty = y + h - h * t / 4.0;
        fprintf(out,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#808080\"/>"
                "<text x=\"%.1f\" y=\"%.1f\" dy=\"0.35em\" font-family=\"" RS_SVG_FONTS
                "\" font-size=\"%.0f\">%s</text>\n",
                x + COLORBAR_W, ty, x + COLORBAR_W + 3, ty, x + COLORBAR_W + 5, ty, font - 2,
                (const char *[]){"0", "0.25", "0.5", "0.75", "1"}[t]);
    }
    fputs("</g>\n", out);
}

/* The colours of the coverage marks in the pictures and the page. */
#define COVERAGE_LOW_COLOR "#1f5fbf"
#define COVERAGE_HIGH_COLOR "#c0392b"
static const char *coverage_color(int mark)
{
    return mark < 0 ? COVERAGE_LOW_COLOR : mark > 0 ? COVERAGE_HIGH_COLOR : "#000000";
}

#define COVERAGE_LEGEND                                                                            \
    "\xCE\xA3_i \xCE\xB1_ij under each source word: blue below 0.2 (barely attended), red "        \
    "above 2 (attended past twice)"

/* Σ_i α_ij under each column, read upwards like the heads, coloured by its
 * mark, and the legend line; its own <g class="coverage"> without
 * font-family or shape-rendering, so that the explorer's selectors of
 * labels and cells (serve_page.html) do not see it. y: the top. */
static void svg_coverage(FILE *out, const rs_alignment *a, const double *cov, double x0, double y,
                         double cell, double font, double legend_y)
{
    fputs("<g class=\"coverage\">\n", out);
    for (int j = 0; j < a->cols; j++)
        fprintf(out,
                "<text transform=\"translate(%.1f %.1f) rotate(-90)\" dy=\"0.35em\" "
                "text-anchor=\"end\" font-family=\"" RS_SVG_FONTS "\" font-size=\"%.0f\" "
                "fill=\"%s\"%s>%.2f</text>\n",
                x0 + (j + 0.5) * cell, y, font - 2,
                coverage_color(rs_alignment_coverage_mark(a, cov, j)),
                rs_alignment_coverage_mark(a, cov, j) ? " font-weight=\"bold\"" : "", cov[j]);
    fprintf(out,
            "<text x=\"%.1f\" y=\"%.1f\" font-family=\"" RS_SVG_FONTS "\" font-size=\"%.0f\" "
            "fill=\"#444444\">" COVERAGE_LEGEND "</text>\n</g>\n",
            x0, legend_y, font - 2);
}

static int write_svg(FILE *out, const rs_alignment *a, const display *d, const char *title)
{
    const int big = a->rows > 40 || a->cols > 40;
    const double font = big ? 11.0 : 13.0, cell = big ? 16.0 : 22.0, pad = 12.0, gap = 6.0;
    double label_w = 0.0, head_h = 0.0;
    for (int i = 0; i < a->rows; i++)
        if (rs_text_width(d->tgt[i], font) > label_w)
            label_w = rs_text_width(d->tgt[i], font);
    for (int j = 0; j < a->cols; j++)
        if (rs_text_width(d->src[j], font) > head_h)
            head_h = rs_text_width(d->src[j], font);
    const double x0 = pad + label_w + gap, y0 = pad + head_h + gap;
    /* the colour bar right of the matrix: at least 100 px tall, so that its
     * ticks are readable beside a matrix of one or two rows */
    const double bar_h = a->rows * cell > 100.0 ? a->rows * cell : 100.0;
    const double bar_x = x0 + a->cols * cell + 2 * gap;
    /* under the matrix: the coverages (as tall as "0.00" is wide) and their legend */
    const double cov_y = y0 + a->rows * cell + gap, cov_h = rs_text_width("00.00", font - 2);
    const double legend_y = cov_y + cov_h + gap + font;
    double width = bar_x + COLORBAR_W + 5 + rs_text_width("0.75", font - 2) + pad;
    if (x0 + rs_text_width(COVERAGE_LEGEND, font - 2) + pad > width)
        width = x0 + rs_text_width(COVERAGE_LEGEND, font - 2) + pad;
    const double bottom = legend_y + gap > y0 + bar_h ? legend_y + gap : y0 + bar_h;
    const double height = bottom + pad;
    double *cov = malloc(sizeof *cov * (size_t)a->cols);
    if (!cov)
        return -1;
    rs_alignment_coverage(a, cov);
    if (rs_svg_begin(out, ceil(width), ceil(height), title))
        return -1;
    fprintf(out, "<g font-family=\"" RS_SVG_FONTS "\" font-size=\"%.0f\" fill=\"#000000\">\n",
            font);
    /* Source tokens along the top, read upwards (rotated by -90°), as in the paper. */
    for (int j = 0; j < a->cols; j++) {
        fprintf(out, "<text transform=\"translate(%.1f %.1f) rotate(-90)\" dy=\"0.35em\">",
                x0 + (j + 0.5) * cell, y0 - gap);
        rs_xml_escape(out, d->src[j]);
        fputs("</text>\n", out);
    }
    for (int i = 0; i < a->rows; i++) {
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" dy=\"0.35em\" text-anchor=\"end\">", x0 - gap,
                y0 + (i + 0.5) * cell);
        rs_xml_escape(out, d->tgt[i]);
        fputs("</text>\n", out);
    }
    fputs("</g>\n<g shape-rendering=\"crispEdges\">\n", out);
    for (int i = 0; i < a->rows; i++)
        for (int j = 0; j < a->cols; j++) {
            char hex[8];
            grey_hex(hex, a->w[(size_t)i * a->cols + j]);
            fprintf(
                out,
                "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.0f\" height=\"%.0f\" fill=\"%s\"><title>",
                x0 + j * cell, y0 + i * cell, cell, cell, hex);
            cell_title(out, a, d, i, j);
            fputs("</title></rect>\n", out);
        }
    fprintf(out,
            "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" "
            "stroke=\"#808080\" stroke-width=\"1\"/>\n</g>\n",
            x0, y0, a->cols * cell, a->rows * cell);
    svg_colorbar(out, bar_x, y0, bar_h, font);
    svg_coverage(out, a, cov, x0, cov_y, cell, font, legend_y);
    free(cov);
    return rs_svg_end(out);
}

int rs_alignment_write_svg(FILE *out, const rs_alignment *a, const char *title)
{
    display d;
    if (display_make(&d, a))
        return -1;
    int rc = write_svg(out, a, &d, title);
    display_free(&d);
    return rc;
}

int rs_alignment_html_begin(FILE *out, const char *title)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>", out);
    rs_xml_escape(out, title);
    fputs("</title>\n<style>\n"
          "body { font-family: " RS_SVG_FONTS "; margin: 1.5em; color: #111; }\n"
          "#weight { position: sticky; top: 0; background: #ffffe0; border: 1px solid #ccc;"
          " padding: .3em .6em; display: inline-block; min-width: 16em; }\n"
          "table.al { border-collapse: collapse; margin: .5em 0 2em; }\n"
          "table.al th { font-weight: normal; padding: 0 .3em; white-space: nowrap; }\n"
          "table.al th.src { vertical-align: bottom; height: 1px; }\n"
          "table.al th.src span { writing-mode: vertical-rl; transform: rotate(180deg); }\n"
          "table.al th.tgt { text-align: right; }\n"
          "table.al td { width: 1.6em; height: 1.6em; min-width: 1.6em; padding: 0;"
          " border: 1px solid #ddd; font-size: 70%; text-align: center; color: #000; }\n"
          "table.al td.dark { color: #fff; }\n"
          "table.al td:hover { outline: 2px solid #e0301e; }\n"
          ".colorbar { display: inline-flex; align-items: center; gap: .4em; margin-left: 1em;"
          " font-size: 85%; }\n"
          ".colorbar .scale { display: inline-block; width: 12em; height: .9em;"
          " border: 1px solid #808080; background: linear-gradient(to right, #000000, #ffffff); }\n"
          "table.al tr.coverage td { border: none; font-size: 65%; writing-mode: vertical-rl;"
          " transform: rotate(180deg); height: auto; }\n"
          "table.al tr.coverage td.low { color: " COVERAGE_LOW_COLOR "; font-weight: bold; }\n"
          "table.al tr.coverage td.high { color: " COVERAGE_HIGH_COLOR "; font-weight: bold; }\n"
          "</style>\n</head>\n<body>\n<h1>",
          out);
    rs_xml_escape(out, title);
    /* The one colour scale of every matrix view: grey = α, black 0, white 1,
     * linear (grey_hex), the same as the SVG pictures' colour bar. */
    fputs("</h1>\n<p id=\"weight\">Point at a cell to see its weight.</p>\n"
          "<p class=\"colorbar\" aria-label=\"colour scale\">\xCE\xB1 = 0 "
          "<span class=\"scale\"></span> 1 (grey = weight, linear)</p>\n"
          "<p class=\"legend\">Under each matrix, " COVERAGE_LEGEND ".</p>\n",
          out);
    return finish(out);
}

static int write_html(FILE *out, const rs_alignment *a, const display *d, int id, int flags)
{
    fprintf(out,
            "<div class=\"sentence\">\n<h2>Sentence %d</h2>\n<table class=\"al\">\n<tr><th></th>",
            id);
    for (int j = 0; j < a->cols; j++) {
        fputs("<th class=\"src\"><span>", out);
        rs_xml_escape(out, d->src[j]);
        fputs("</span></th>", out);
    }
    fputs("</tr>\n", out);
    for (int i = 0; i < a->rows; i++) {
        fputs("<tr><th class=\"tgt\">", out);
        rs_xml_escape(out, d->tgt[i]);
        fputs("</th>", out);
        for (int j = 0; j < a->cols; j++) {
            const float w = a->w[(size_t)i * a->cols + j];
            char hex[8];
            grey_hex(hex, w);
            fprintf(out, "<td%s style=\"background:%s\" title=\"",
                    w < 0.5f ? " class=\"dark\"" : "", hex);
            cell_title(out, a, d, i, j);
            fputs("\">", out);
            if (flags & RS_ALIGN_NUMBERS)
                fprintf(out, "%.2f", w);
            fputs("</td>", out);
        }
        fputs("</tr>\n", out);
    }
    double *cov = malloc(sizeof *cov * (size_t)a->cols);
    if (!cov)
        return -1;
    rs_alignment_coverage(a, cov);
    fputs("<tr class=\"coverage\"><th class=\"tgt\">\xCE\xA3\xCE\xB1</th>", out);
    for (int j = 0; j < a->cols; j++) {
        const int mark = rs_alignment_coverage_mark(a, cov, j);
        fprintf(out, "<td%s title=\"",
                mark < 0   ? " class=\"low\""
                : mark > 0 ? " class=\"high\""
                           : "");
        rs_xml_escape(out, d->src[j]);
        fprintf(out, ": \xCE\xA3_i \xCE\xB1_ij = %.3f\">%.2f</td>", cov[j], cov[j]);
    }
    fputs("</tr>\n", out);
    free(cov);
    fputs("</table>\n</div>\n", out);
    return finish(out);
}

int rs_alignment_write_html(FILE *out, const rs_alignment *a, int id, int flags)
{
    display d;
    if (display_make(&d, a))
        return -1;
    int rc = write_html(out, a, &d, id, flags);
    display_free(&d);
    return rc;
}

int rs_alignment_html_end(FILE *out)
{
    /* Shows the title of the cell under the pointer in the bar at the top. */
    fputs("<script>\n"
          "document.addEventListener('mouseover', function (e) {\n"
          "  if (e.target.tagName === 'TD') {\n"
          "    document.getElementById('weight').textContent = e.target.title;\n"
          "  }\n"
          "});\n"
          "</script>\n</body>\n</html>\n",
          out);
    return finish(out);
}

/* ---- the table of output formats ---- */

static int text_write(FILE *out, const rs_alignment *a, int id, const rs_align_style *st)
{
    (void)id;
    return rs_alignment_write_text(out, a, st->flags);
}

static int tsv_begin(FILE *out, const rs_align_style *st)
{
    (void)st;
    return rs_alignment_write_tsv_header(out);
}

static int tsv_write(FILE *out, const rs_alignment *a, int id, const rs_align_style *st)
{
    (void)st;
    return rs_alignment_write_tsv(out, a, id - 1);
}

static int json_write(FILE *out, const rs_alignment *a, int id, const rs_align_style *st)
{
    (void)st;
    return rs_alignment_write_json(out, a, id - 1);
}

static int pharaoh_write(FILE *out, const rs_alignment *a, int id, const rs_align_style *st)
{
    (void)id;
    return rs_alignment_write_pharaoh(out, a, st->threshold);
}

static int svg_write(FILE *out, const rs_alignment *a, int id, const rs_align_style *st)
{
    char title[512];
    snprintf(title, sizeof title, "%s, sentence %d", st->title ? st->title : "alignment", id);
    return rs_alignment_write_svg(out, a, title);
}

static int html_begin(FILE *out, const rs_align_style *st)
{
    return rs_alignment_html_begin(out, st->title ? st->title : "alignment");
}

static int html_write(FILE *out, const rs_alignment *a, int id, const rs_align_style *st)
{
    return rs_alignment_write_html(out, a, id, st->flags);
}

static int html_end(FILE *out, const rs_align_style *st)
{
    (void)st;
    return rs_alignment_html_end(out);
}

const rs_align_writer rs_align_writers[] = {
    {"text", NULL, text_write, NULL, RS_ALIGN_COLOR | RS_ALIGN_NUMBERS, 0},
    {"tsv", tsv_begin, tsv_write, NULL, 0, 0},
    {"json", NULL, json_write, NULL, 0, 0},
    {"pharaoh", NULL, pharaoh_write, NULL, RS_ALIGN_THRESHOLD, 0},
    {"svg", NULL, svg_write, NULL, 0, 1},
    {"html", html_begin, html_write, html_end, RS_ALIGN_NUMBERS, 0},
    {NULL, NULL, NULL, NULL, 0, 0},
};

const rs_align_writer *rs_align_writer_find(const char *name)
{
    for (const rs_align_writer *w = rs_align_writers; w->name; w++)
        if (!strcmp(name, w->name))
            return w;
    return NULL;
}
