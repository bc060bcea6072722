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

int rs_nbest_refuse(const char *const *lines, int count, const char *name, rs_error *err)
{
    for (int i = 0; i < count; i++)
        if (rs_nbest_line(lines[i]))
            return rs_fail(err,
                           "%s:%d: an n-best line ('N ||| text ||| features ||| score'), not a "
                           "translation: score plain output (translate without --n-best, or "
                           "n_best: 1 in a --config file)",
                           name, i + 1);
    return 0;
}
