/* SVG and HTML helpers (src/common/svg.c): escaping of markup, controls, non-characters
 * and invalid UTF-8; width estimates for wide, combining and invalid
 * characters; the document frame; and -1 from a stream in error. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/svg.h"

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

Suite *svg_suite(void)
{
    Suite *s = suite_create("svg");
    TCase *tc = tcase_create("escaping and frame");
    tcase_add_test(tc, xml_escape_covers_markup_controls_and_bad_utf8);
    tcase_add_test(tc, xml_escape_newlines_noncharacters_and_plain_text);
    tcase_add_test(tc, widths_of_wide_combining_and_invalid_characters);
    tcase_add_test(tc, document_frame_and_stream_errors);
    suite_add_tcase(s, tc);
    return s;
}
