/* Hand-written SVG and HTML: escaping, text-width estimates and the
 * document frame shared by the alignment pictures and the training plot.
 * Writers return 0, or -1 when the stream has an error (ferror). */
#ifndef RS_SVG_H
#define RS_SVG_H

#include <stdio.h>

/* A font list that covers Latin, Greek, Cyrillic, CJK, Arabic, Hebrew and
 * Devanagari on common systems; quoted for use inside a double-quoted
 * attribute. Renderers fall back along it per character. */
#define RS_SVG_FONTS                                                                               \
    "'DejaVu Sans', 'Noto Sans', 'Noto Sans CJK SC', 'Noto Sans CJK JP', 'Noto Sans Arabic', "     \
    "'Noto Sans Hebrew', 'Noto Sans Devanagari', 'Arial Unicode MS', Arial, sans-serif"

/* Writes s as XML/HTML character data, safe in text and in quoted attribute
 * values: & < > " ' and tab, newline, CR as references; other control
 * characters, U+FFFE, U+FFFF and invalid UTF-8 bytes (none of which XML
 * allows) as U+FFFD. */
int rs_xml_escape(FILE *out, const char *s);

/* Estimated rendered width in pixels of s at font_size: wide (East Asian)
 * characters 1 em, combining marks 0, everything else 0.62 em (a little
 * more than DejaVu Sans' average, so that labels do not overflow). */
double rs_text_width(const char *s, double font_size);

/* Terminal columns of s (East Asian wide = 2, combining = 0, other = 1;
 * invalid bytes count 1). */
int rs_display_width(const char *s);

/* Opens an SVG document of the given size (px) with a white background and
 * a <title>; rs_svg_end closes it. */
int rs_svg_begin(FILE *out, double width, double height, const char *title);
int rs_svg_end(FILE *out);

/* A chart's opening: rs_svg_begin, then a group in the charts' font (left
 * open, for the axes) whose first element is the title, centred at title_x. */
int rs_svg_chart_begin(FILE *out, double width, double height, const char *title, double title_x);

#endif
