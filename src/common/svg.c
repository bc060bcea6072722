#include <string.h>
#include <utf8proc.h>

#include "common/svg.h"

/* Decodes one code point of s (NUL-terminated); *cp = -1 for an invalid byte.
 * Returns the bytes consumed (at least 1). */
static int next_code_point(const char *s, int32_t *cp)
{
    size_t len = strnlen(s, 4);
    utf8proc_int32_t c;
    utf8proc_ssize_t n = utf8proc_iterate((const utf8proc_uint8_t *)s, (utf8proc_ssize_t)len, &c);
    if (n <= 0) {
        *cp = -1;
        return 1;
    }
    *cp = c;
    return (int)n;
}

int rs_xml_escape(FILE *out, const char *s)
{
    while (*s) {
        int32_t c;
        int n = next_code_point(s, &c);
        switch (c) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        case '\'': fputs("&#39;", out); break; /* &apos; is not HTML 4 */
        case '\t': fputs("&#9;", out); break;
        case '\n': fputs("&#10;", out); break;
        case '\r': fputs("&#13;", out); break;
        default:
            if (c < 0x20 || c == 0x7F || c == 0xFFFE || c == 0xFFFF)
                fputs("\xEF\xBF\xBD", out); /* U+FFFD; c = -1 for an invalid byte */
            else
                fwrite(s, 1, (size_t)n, out);
        }
        s += n;
    }
    return ferror(out) ? -1 : 0;
}

double rs_text_width(const char *s, double font_size)
{
    double em = 0.0;
    while (*s) {
        int32_t c;
        s += next_code_point(s, &c);
        int w = c < 0 ? 1 : utf8proc_charwidth(c);
        em += w >= 2 ? 1.0 : w == 1 ? 0.62 : 0.0;
    }
    return em * font_size;
}

int rs_display_width(const char *s)
{
    int width = 0;
    while (*s) {
        int32_t c;
        s += next_code_point(s, &c);
        width += c < 0 ? 1 : utf8proc_charwidth(c);
    }
    return width;
}

int rs_svg_begin(FILE *out, double width, double height, const char *title)
{
    fprintf(out,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%.0f\" "
            "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\">\n<title>",
            width, height, width, height);
    rs_xml_escape(out, title);
    fprintf(out, "</title>\n<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n");
    return ferror(out) ? -1 : 0;
}

int rs_svg_end(FILE *out)
{
    fputs("</svg>\n", out);
    return ferror(out) ? -1 : 0;
}

int rs_svg_chart_begin(FILE *out, double width, double height, const char *title, double title_x)
{
    if (rs_svg_begin(out, width, height, title))
        return -1;
    fprintf(out, "<g font-family=\"" RS_SVG_FONTS "\" font-size=\"12\" fill=\"#222\">\n");
    fprintf(out, "<text x=\"%.1f\" y=\"24\" font-size=\"15\" text-anchor=\"middle\">", title_x);
    rs_xml_escape(out, title);
    fputs("</text>\n", out);
    return 0;
}
