/* UTF-8 validation for the lowest layer (see utf8.h). */
#include "common/utf8.h"

size_t rs_utf8_sequence(const unsigned char *p, const unsigned char *end)
{
    unsigned char c = p[0];
    size_t n;
    unsigned char lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
    if (c >= 0xC2 && c <= 0xDF)
        n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0)
            lo = 0xA0;
        if (c == 0xED)
            hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0)
            lo = 0x90;
        if (c == 0xF4)
            hi = 0x8F;
    } else
        return 0;
    if ((size_t)(end - p) < n || p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (p[i] < 0x80 || p[i] > 0xBF)
            return 0;
    return n;
}

size_t rs_utf8_invalid(const unsigned char *s, size_t size)
{
    const unsigned char *p = s, *end = s + size;
    while (p < end) {
        if (*p < 0x80) {
            p++;
            continue;
        }
        const size_t n = rs_utf8_sequence(p, end);
        if (!n)
            return (size_t)(p - s);
        p += n;
    }
    return size;
}
