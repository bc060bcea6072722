/* Moses n-best lines among hypotheses (see nbest.h). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "eval/nbest.h"

/* The field [s, end) without its surrounding ASCII spaces. */
static void trim(const char **s, const char **end)
{
    while (*s < *end && isspace((unsigned char)**s))
        ++*s;
    while (*end > *s && isspace((unsigned char)(*end)[-1]))
        --*end;
}

static int is_integer(const char *s, const char *end)
{
    trim(&s, &end);
    if (s == end)
        return 0;
    for (; s < end; s++)
        if (!isdigit((unsigned char)*s))
            return 0;
    return 1;
}

/* A number as strtod reads it, filling the whole field. */
static int is_number(const char *s, const char *end)
{
    trim(&s, &end);
    char buf[64];
    const size_t n = (size_t)(end - s);
    if (n == 0 || n >= sizeof buf)
        return 0;
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *stop;
    strtod(buf, &stop);
    return *stop == '\0';
}

int rs_nbest_line(const char *line)
{
    const char *field[5];
    int fields = 0;
    field[fields++] = line;
    for (const char *p = line; fields < 5 && (p = strstr(p, "|||")); p += 3)
        field[fields++] = p + 3;
    if (fields < 4)
        return 0;
    const char *fourth_end = fields == 5 ? field[4] - 3 : field[3] + strlen(field[3]);
    return is_integer(field[0], field[1] - 3) && is_number(field[3], fourth_end);
}

/* One item of an alignment: a link "i-j", or a soft row "w,w,…" of numbers. */
static int is_alignment_item(const char *s, const char *end)
{
    const char *dash = memchr(s, '-', (size_t)(end - s));
    if (dash && dash > s && is_integer(s, dash) && is_integer(dash + 1, end))
        return 1;
    for (const char *from = s; from < end;) {
        const char *comma = memchr(from, ',', (size_t)(end - from));
        const char *to = comma ? comma : end;
        if (!is_number(from, to))
            return 0;
        from = comma ? comma + 1 : end;
    }
    return 1;
}

int rs_alignment_line(const char *line)
{
    const char *bars = strstr(line, "|||");
    if (!bars || strstr(bars + 3, "|||"))
        return 0;
    const char *p = bars + 3, *end = p + strlen(p);
    trim(&p, &end);
    while (p < end) {
        const char *item_end = p;
        while (item_end < end && !isspace((unsigned char)*item_end))
            item_end++;
        if (!is_alignment_item(p, item_end))
            return 0;
        p = item_end;
        while (p < end && isspace((unsigned char)*p))
            p++;
    }
    return 1;
}

int rs_nbest_refuse(const char *const *lines, int count, const char *name, rs_error *err)
{
    for (int i = 0; i < count; i++) {
        if (rs_nbest_line(lines[i]))
            return rs_fail(err,
                           "%s:%d: an n-best line ('N ||| text ||| features ||| score'), not a "
                           "translation: score plain output (translate without --n-best, or "
                           "n_best: 1 in a --config file)",
                           name, i + 1);
        if (rs_alignment_line(lines[i]))
            return rs_fail(err,
                           "%s:%d: a translation with its alignment ('text ||| links'), not a "
                           "translation alone: score output of translate without --alignment",
                           name, i + 1);
    }
    return 0;
}
