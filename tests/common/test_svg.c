/* SVG and HTML helpers (src/common/svg.c): escaping of markup, controls, non-characters
 * and invalid UTF-8; width estimates for wide, combining and invalid
 * characters; the document frame; and -1 from a stream in error. The axes
 * of the charts (src/common/chart.c): round ticks; and `rnnsearch plot`'s
 * and `align --format svg`'s labels inside the picture. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <math.h>

#include "common/chart.h"
#include "common/svg.h"
#include "eval/alignment.h"
#include "testdir.h"
#include "testprog.h"

/* rs_xml_escape(s) as a string; free() it. */
static char *escaped(const char *s)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(rs_xml_escape(f, s), 0);
    fclose(f);
    return buf;
}

START_TEST(xml_escape_covers_markup_controls_and_bad_utf8)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    rs_xml_escape(f, "<a href=\"x\">&'\t\x01\xff\xE6\x97\xA5");
    fclose(f);
    ck_assert_str_eq(
        buf, "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&#9;\xEF\xBF\xBD\xEF\xBF\xBD\xE6\x97\xA5");
    free(buf);
    ck_assert_int_eq(rs_display_width("ab\xE6\x97\xA5"), 4);
    ck_assert(rs_text_width("\xE6\x97\xA5", 10.0) > rs_text_width("a", 10.0));
}
END_TEST

START_TEST(xml_escape_newlines_noncharacters_and_plain_text)
{
    char *e = escaped("a\nb\rc\x7f\xEF\xBF\xBE\xEF\xBF\xBF\xEF\xBF\xBD");
    /* Line breaks survive as references; DEL, U+FFFE and U+FFFF become U+FFFD. */
    ck_assert_str_eq(e, "a&#10;b&#13;c\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
    free(e);
    /* A truncated and an overlong sequence, and a lone continuation byte:
     * one U+FFFD per invalid byte. */
    e = escaped("x\xE6\x97"
                "y\xC0\xAF"
                "z\x80");
    ck_assert_str_eq(e, "x\xEF\xBF\xBD\xEF\xBF\xBD"
                        "y\xEF\xBF\xBD\xEF\xBF\xBD"
                        "z\xEF\xBF\xBD");
    free(e);
    /* Text with nothing to escape is copied byte for byte. */
    const char *plain = "Stra\xC3\x9F"
                        "e \xD7\xA9\xD7\x9C\xD7\x95\xD7\x9D \xF0\x9F\x98\x80 (1+2)=3; 50%";
    e = escaped(plain);
    ck_assert_str_eq(e, plain);
    free(e);
    e = escaped("");
    ck_assert_str_eq(e, "");
    free(e);
}
END_TEST

START_TEST(widths_of_wide_combining_and_invalid_characters)
{
    /* Narrow 0.62 em, wide (East Asian) 1 em, combining marks 0. */
    ck_assert_double_eq_tol(rs_text_width("abc", 10.0), 18.6, 1e-9);
    ck_assert_double_eq_tol(rs_text_width("\xE6\x97\xA5\xE6\x9C\xAC", 12.0), 24.0, 1e-9);
    ck_assert_double_eq_tol(rs_text_width("e\xCC\x81", 10.0), 6.2, 1e-9);
    ck_assert(rs_text_width("", 10.0) == 0.0);
    ck_assert_int_eq(rs_display_width("e\xCC\x81"), 1);
    ck_assert_int_eq(rs_display_width("\xE6\x97\xA5\xE6\x9C\xAC!"), 5);
    ck_assert_int_eq(rs_display_width("a\xFF"
                                      "b"),
                     3); /* an invalid byte counts 1 */
    ck_assert_int_eq(rs_display_width(""), 0);
}
END_TEST

START_TEST(document_frame_and_stream_errors)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(rs_svg_begin(f, 320.4, 200, "a < b & \"c\""), 0);
    ck_assert_int_eq(rs_svg_end(f), 0);
    fclose(f);
    ck_assert_msg(strncmp(buf, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg ", 44) == 0, "%s",
                  buf);
    ck_assert_msg(strstr(buf, "width=\"320\" height=\"200\" viewBox=\"0 0 320 200\"") != NULL, "%s",
                  buf);
    ck_assert_msg(strstr(buf, "<title>a &lt; b &amp; &quot;c&quot;</title>") != NULL, "%s", buf);
    ck_assert_msg(strstr(buf, "fill=\"#ffffff\"") != NULL, "no white background: %s", buf);
    size_t len = strlen(buf);
    ck_assert(len > 7 && strcmp(buf + len - 7, "</svg>\n") == 0);
    free(buf);
    /* A stream that cannot be written reports -1. */
    FILE *ro = fopen("/dev/null", "r");
    ck_assert_ptr_nonnull(ro);
    ck_assert_int_eq(rs_svg_begin(ro, 1, 1, "t"), -1);
    ck_assert_int_eq(rs_xml_escape(ro, "x"), -1);
    ck_assert_int_eq(rs_svg_end(ro), -1);
    fclose(ro);
}
END_TEST

/* Whether v is 1, 2 or 5 times a power of ten. */
static int round_number(double v)
{
    if (v == 0)
        return 1;
    const double m = fabs(v) / pow(10.0, floor(log10(fabs(v)) + 1e-9));
    return fabs(m - 1) < 1e-6 || fabs(m - 2) < 1e-6 || fabs(m - 5) < 1e-6;
}

/* Ticks of a linear axis: every step, a round one, labelled with the
 * decimals it needs; the values of the labels are the ticks'. */
static void expect_linear_ticks(double lo, double hi, const char *first, const char *last)
{
    rs_axis a = rs_axis_nice(lo, hi, 1);
    double v[64];
    char label[64][RS_TICK_LABEL];
    int n = rs_axis_ticks(&a, v, label, 64);
    ck_assert_msg(round_number(a.step), "step %g", a.step);
    ck_assert_int_ge(n, 3);
    ck_assert_int_le(n, 11);
    ck_assert_str_eq(label[0], first);
    ck_assert_str_eq(label[n - 1], last);
    for (int k = 0; k < n; k++) {
        ck_assert_double_eq_tol(atof(label[k]), v[k], a.step * 1e-6);
        ck_assert_double_eq_tol(v[k] / a.step, round(v[k] / a.step), 1e-6);
    }
}

START_TEST(axis_ticks_are_round)
{
    expect_linear_ticks(0.857, 3.43, "0.0", "3.5");
    expect_linear_ticks(0, 100, "0", "100");
    expect_linear_ticks(0.000446, 0.0021, "0.0000", "0.0025");
    expect_linear_ticks(1, 18500, "0", "20000");
    /* A log axis over four decades: the powers of ten, written out. */
    rs_axis a = rs_axis_log(0.000446, 3.43);
    double v[64];
    char label[64][RS_TICK_LABEL];
    int n = rs_axis_ticks(&a, v, label, 64);
    const char *want[] = {"0.0001", "0.001", "0.01", "0.1", "1", "10"};
    ck_assert_int_eq(n, 6);
    for (int k = 0; k < n; k++)
        ck_assert_str_eq(label[k], want[k]);
    /* Over two decades: 2 and 5 between. */
    a = rs_axis_log(0.03, 0.9);
    n = rs_axis_ticks(&a, v, label, 64);
    const char *want2[] = {"0.01", "0.02", "0.05", "0.1", "0.2", "0.5", "1"};
    ck_assert_int_eq(n, 7);
    for (int k = 0; k < n; k++) {
        ck_assert_str_eq(label[k], want2[k]);
        ck_assert(round_number(v[k]));
    }
    ck_assert_double_eq_tol(rs_axis_label_width(&a, 10.0), rs_text_width("0.01", 10.0), 1e-9);
}
END_TEST

/* A <text> of a picture: where it reaches horizontally (an estimate with
 * common/svg.c's widths), its anchor and its text. Rotated text (axis names,
 * column heads) is its line's height wide about its x. */
typedef struct {
    double left, right;
    char anchor[8];
    char text[128];
    int rotated;
} svg_text;

static double attr(const char *tag, const char *name, double otherwise)
{
    char key[32];
    snprintf(key, sizeof key, " %s=\"", name);
    const char *p = strstr(tag, key);
    return p ? atof(p + strlen(key)) : otherwise;
}

/* The texts of svg (at most max); *width: the viewBox's. */
static int svg_texts(const char *svg, svg_text *t, int max, double *width)
{
    const char *vb = strstr(svg, "viewBox=\"0 0 ");
    ck_assert_ptr_nonnull(vb);
    *width = atof(vb + 13);
    int n = 0;
    double font = 12;
    for (const char *p = svg; (p = strstr(p, "<")) && n < max; p++) {
        if (!strncmp(p, "<g ", 3))
            font = attr(p, "font-size", font);
        if (strncmp(p, "<text ", 6))
            continue;
        const char *gt = strchr(p, '>'), *end = strstr(p, "</text>");
        char tag[512];
        snprintf(tag, sizeof tag, "%.*s", (int)(gt - p), p);
        svg_text *x = &t[n++];
        snprintf(x->text, sizeof x->text, "%.*s", (int)(end - gt - 1), gt + 1);
        const char *anchor = strstr(tag, "text-anchor=\"");
        snprintf(x->anchor, sizeof x->anchor, "%.*s", anchor ? (int)strcspn(anchor + 13, "\"") : 5,
                 anchor ? anchor + 13 : "start");
        const char *tr = strstr(tag, "translate(");
        const double size = attr(tag, "font-size", font);
        x->rotated = tr != NULL;
        if (tr) {
            const double at = atof(tr + 10);
            x->left = at - size;
            x->right = at + size;
            continue;
        }
        const double at = attr(tag, "x", 0), w = rs_text_width(x->text, size);
        x->left = !strcmp(x->anchor, "end")      ? at - w
                  : !strcmp(x->anchor, "middle") ? at - w / 2
                                                 : at;
        x->right = x->left + w;
    }
    return n;
}

/* Every label inside the viewBox; the left axis' tick labels (anchored at
 * their end) clear of its rotated name, and round. */
static void expect_labels_inside(const char *svg, int log_scale)
{
    svg_text t[256];
    double width;
    int n = svg_texts(svg, t, 256, &width), ticks = 0;
    double name_right = -1;
    for (int k = 0; k < n; k++) {
        ck_assert_msg(t[k].left >= 0 && t[k].right <= width, "\"%s\" reaches %.1f..%.1f of 0..%.0f",
                      t[k].text, t[k].left, t[k].right, width);
        if (t[k].rotated && strstr(t[k].text, "loss"))
            name_right = t[k].right;
    }
    ck_assert(name_right > 0);
    for (int k = 0; k < n; k++)
        if (!strcmp(t[k].anchor, "end") && !t[k].rotated) {
            ticks++;
            ck_assert_msg(t[k].left > name_right,
                          "tick \"%s\" (from %.1f) under the axis name (to %.1f)", t[k].text,
                          t[k].left, name_right);
            if (log_scale)
                ck_assert_msg(round_number(atof(t[k].text)), "tick \"%s\"", t[k].text);
        }
    ck_assert_int_ge(ticks, 3);
}

/* Found by a user: a loss axis ticked 3.43, 2.57, 0.857 and a label
 * ".000446" cut at the picture's edge. plot's margins hold its labels. */
START_TEST(plot_labels_are_round_and_inside)
{
    char dir[64], path[128], cmd[512];
    static char out[1 << 17];
    testdir_make(dir, "rnnsearch-svg-plot");
    snprintf(path, sizeof path, "%s/train.log.tsv", dir);
    const char *log = "step\ttrain_loss\tdev_loss\tdev_metric\taer\n"
                      "100\t3.43\t3.5\t1.5\t80\n"
                      "2000\t0.857\t0.9\t20.5\t30\n"
                      "18500\t0.000446\t0.0021\t35.25\t0.5\n";
    testfile_write(path, (const unsigned char *)log, strlen(log));
    snprintf(cmd, sizeof cmd, "plot %s -o - 2>/dev/null", path);
    ck_assert_int_eq(testprog_run(cmd, out, sizeof out), 0);
    ck_assert_msg(strstr(out, ">0.0001</text>") && strstr(out, ">1</text>") &&
                      strstr(out, "log scale"),
                  "%s", out);
    expect_labels_inside(out, 1);
    snprintf(cmd, sizeof cmd, "plot %s --scale linear -o - 2>/dev/null", path);
    ck_assert_int_eq(testprog_run(cmd, out, sizeof out), 0);
    ck_assert_msg(strstr(out, ">3.5</text>") && !strstr(out, "3.43<"), "%s", out);
    expect_labels_inside(out, 0);
    testdir_remove(dir);
}
END_TEST

/* Every matrix picture has a colour bar of the one scale: grey_hex's greys
 * (grey = weight, black 0, white 1) from the bottom up, ticks 0 … 1, in its
 * own group after the cells; the terminal's colour mode draws the 24 greys
 * as a bar and the block mode keeps its glyph legend. */
START_TEST(alignment_pictures_have_a_colour_bar)
{
    const char *src[] = {"a", "b"}, *tgt[] = {"x"};
    float w[2 * 3] = {0.001f, 0.9f, 0.099f, 0.2f, 0.3f, 0.5f};
    rs_alignment a;
    rs_error err;
    ck_assert(!rs_alignment_make(&a, tgt, 1, src, 2, w, &err));
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    ck_assert_int_eq(rs_alignment_write_svg(f, &a, "t"), 0);
    fclose(f);
    const char *bar = strstr(text, "<g class=\"colorbar\">");
    ck_assert_msg(bar && bar > strstr(text, "shape-rendering=\"crispEdges\">"), "%s", text);
    int bands = 0;
    for (const char *p = bar; (p = strstr(p, "<rect ")) && p < strstr(bar, "</g>"); p++)
        bands++;
    ck_assert_int_eq(bands, 64 + 1);                        /* the bands and the frame */
    ck_assert_ptr_nonnull(strstr(bar, "fill=\"#020202\"")); /* the lowest band: near black */
    ck_assert_ptr_nonnull(strstr(bar, "fill=\"#fdfdfd\"")); /* the highest: near white */
    ck_assert_ptr_nonnull(strstr(bar, ">0.5</text>"));
    free(text);
    text = NULL;
    f = open_memstream(&text, &size);
    ck_assert_int_eq(rs_alignment_html_begin(f, "t"), 0);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(text, "class=\"colorbar\""));
    ck_assert_ptr_nonnull(strstr(text, "linear-gradient(to right, #000000, #ffffff)"));
    free(text);
    text = NULL;
    f = open_memstream(&text, &size);
    ck_assert_int_eq(rs_alignment_write_text(f, &a, RS_ALIGN_COLOR), 0);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(text, "\x1b[48;5;232m \x1b[0m\x1b[48;5;233m"));
    ck_assert_ptr_nonnull(strstr(text, "\x1b[48;5;255m \x1b[0m 1"));
    free(text);
    text = NULL;
    f = open_memstream(&text, &size);
    ck_assert_int_eq(rs_alignment_write_text(f, &a, 0), 0);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(text, "\xE2\x96\x88 \xE2\x89\xA5 .875"));
    free(text);
    rs_alignment_free(&a);
}
END_TEST

/* align --format svg sizes its margins to the words: long and wide ones stay
 * inside the picture. */
START_TEST(alignment_labels_are_inside)
{
    const char *src[] = {"Donaudampfschifffahrtsgesellschaftskapit\xC3\xA4n",
                         "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E", "a"};
    const char *tgt[] = {"captain-of-the-Danube-steamship-company", "\xE6\x97\xA5"};
    float w[3 * 4] = {0.97f, 0.01f, 0.01f, 0.01f, 0.1f, 0.8f, 0.05f, 0.05f, 0, 0, 0, 1};
    rs_alignment a;
    rs_error err;
    ck_assert(!rs_alignment_make(&a, tgt, 2, src, 3, w, &err)); /* </s> added to both */
    char *svg = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&svg, &size);
    ck_assert_int_eq(rs_alignment_write_svg(f, &a, "t"), 0);
    fclose(f);
    rs_alignment_free(&a);
    svg_text t[32];
    double width;
    int n = svg_texts(svg, t, 32, &width);
    /* the labels, then the colour bar's name and its five ticks, then the
     * four columns' coverages and their legend */
    ck_assert_int_eq(n, 4 + 3 + 6 + 4 + 1);
    ck_assert_str_eq(t[13].text, "1.07"); /* Σ_i α_i1 = 0.97 + 0.1 + 0 */
    ck_assert_str_eq(t[7].text, "\xCE\xB1");
    ck_assert_str_eq(t[8].text, "0");
    ck_assert_str_eq(t[12].text, "1");
    for (int k = 0; k < n; k++) {
        ck_assert_msg(t[k].left >= 0 && t[k].right <= width, "\"%s\" reaches %.1f..%.1f of 0..%.0f",
                      t[k].text, t[k].left, t[k].right, width);
        if (t[k].rotated) { /* read upwards from its translate()'s y */
            char needle[160];
            snprintf(needle, sizeof needle, ">%s</text>", t[k].text);
            const char *tr = strstr(svg, needle);
            while (tr > svg && strncmp(tr, "translate(", 10))
                tr--;
            const double y = atof(strchr(tr, ' ') + 1);
            ck_assert_msg(y - rs_text_width(t[k].text, 13) >= 0, "\"%s\" rises above the top",
                          t[k].text);
        }
    }
    /* White is 1, black 0 (figure 3 of the paper): the strongest cell is the lightest. */
    ck_assert_msg(strstr(svg, "fill=\"#f7f7f7\"") && strstr(svg, "fill=\"#ffffff\""), "%s", svg);
    free(svg);
}
END_TEST

Suite *svg_suite(void)
{
    Suite *s = suite_create("svg");
    TCase *tc = tcase_create("escaping and frame");
    tcase_add_test(tc, xml_escape_covers_markup_controls_and_bad_utf8);
    tcase_add_test(tc, xml_escape_newlines_noncharacters_and_plain_text);
    tcase_add_test(tc, widths_of_wide_combining_and_invalid_characters);
    tcase_add_test(tc, document_frame_and_stream_errors);
    suite_add_tcase(s, tc);
    TCase *axes = tcase_create("chart axes and label bounds");
    tcase_set_timeout(axes, 30);
    tcase_add_test(axes, axis_ticks_are_round);
    tcase_add_test(axes, plot_labels_are_round_and_inside);
    tcase_add_test(axes, alignment_labels_are_inside);
    tcase_add_test(axes, alignment_pictures_have_a_colour_bar);
    suite_add_tcase(s, axes);
    return s;
}
