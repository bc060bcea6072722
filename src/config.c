#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

void rs_config_defaults(rs_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
#define RS_CFG_I(name, def, help) cfg->name = (def);
#define RS_CFG_F(name, def, help) cfg->name = (def);
#define RS_CFG_S(name, def, help) snprintf(cfg->name, RS_STR_MAX, "%s", (def));
    RS_CONFIG_FIELDS(RS_CFG_I, RS_CFG_F, RS_CFG_S)
#undef RS_CFG_I
#undef RS_CFG_F
#undef RS_CFG_S
}

static int parse_int(const char *key, const char *value, int *out, rs_error *err)
{
    char *end;
    errno = 0;
    long v = strtol(value, &end, 10);
    if (errno || end == value || *end || v < -2147483647L || v > 2147483647L)
        return rs_fail(err, "%s: '%s' is not an integer", key, value);
    *out = (int)v;
    return 0;
}

static int parse_float(const char *key, const char *value, float *out, rs_error *err)
{
    char *end;
    errno = 0;
    float v = strtof(value, &end);
    if (errno || end == value || *end)
        return rs_fail(err, "%s: '%s' is not a number", key, value);
    *out = v;
    return 0;
}

int rs_config_set(rs_config *cfg, const char *key, const char *value, rs_error *err)
{
#define RS_CFG_I(name, def, help) \
    if (!strcmp(key, #name)) return parse_int(key, value, &cfg->name, err);
#define RS_CFG_F(name, def, help) \
    if (!strcmp(key, #name)) return parse_float(key, value, &cfg->name, err);
#define RS_CFG_S(name, def, help)                                              \
    if (!strcmp(key, #name)) {                                                 \
        if (strlen(value) >= RS_STR_MAX)                                       \
            return rs_fail(err, "%s: value longer than %d bytes", key, RS_STR_MAX - 1); \
        snprintf(cfg->name, RS_STR_MAX, "%s", value);                          \
        return 0;                                                              \
    }
    RS_CONFIG_FIELDS(RS_CFG_I, RS_CFG_F, RS_CFG_S)
#undef RS_CFG_I
#undef RS_CFG_F
#undef RS_CFG_S
    return rs_fail(err, "unknown configuration key '%s'", key);
}

void rs_config_write(const rs_config *cfg, FILE *out)
{
    /* %.9g round-trips every float exactly. */
#define RS_CFG_I(name, def, help) fprintf(out, "%s=%d\n", #name, cfg->name);
#define RS_CFG_F(name, def, help) fprintf(out, "%s=%.9g\n", #name, (double)cfg->name);
#define RS_CFG_S(name, def, help) fprintf(out, "%s=%s\n", #name, cfg->name);
    RS_CONFIG_FIELDS(RS_CFG_I, RS_CFG_F, RS_CFG_S)
#undef RS_CFG_I
#undef RS_CFG_F
#undef RS_CFG_S
}

void rs_config_print(const rs_config *cfg, FILE *out)
{
    const char *sep = "";
#define RS_CFG_I(name, def, help) fprintf(out, "%s%s=%d", sep, #name, cfg->name), sep = " ";
#define RS_CFG_F(name, def, help) fprintf(out, "%s%s=%g", sep, #name, (double)cfg->name), sep = " ";
#define RS_CFG_S(name, def, help) fprintf(out, "%s%s=%s", sep, #name, cfg->name), sep = " ";
    RS_CONFIG_FIELDS(RS_CFG_I, RS_CFG_F, RS_CFG_S)
#undef RS_CFG_I
#undef RS_CFG_F
#undef RS_CFG_S
    fputc('\n', out);
}

int rs_config_format(const rs_config *cfg, const char *key, char *buf, size_t size)
{
#define RS_CFG_I(name, def, help) \
    if (!strcmp(key, #name)) return snprintf(buf, size, "%d", cfg->name) < 0 ? -1 : 0;
#define RS_CFG_F(name, def, help) \
    if (!strcmp(key, #name)) return snprintf(buf, size, "%g", (double)cfg->name) < 0 ? -1 : 0;
#define RS_CFG_S(name, def, help) \
    if (!strcmp(key, #name)) return snprintf(buf, size, "%s", cfg->name) < 0 ? -1 : 0;
    RS_CONFIG_FIELDS(RS_CFG_I, RS_CFG_F, RS_CFG_S)
#undef RS_CFG_I
#undef RS_CFG_F
#undef RS_CFG_S
    return -1;
}

int rs_config_parse(rs_config *cfg, const char *text, rs_error *err)
{
    int line_no = 0;
    const char *p = text;
    while (*p) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        line_no++;
        if (len > 0) {
            char line[256];
            if (len >= sizeof line)
                return rs_fail(err, "config line %d is too long", line_no);
            memcpy(line, p, len);
            line[len] = 0;
            char *eq = strchr(line, '=');
            if (!eq)
                return rs_fail(err, "config line %d has no '='", line_no);
            *eq = 0;
            if (rs_config_set(cfg, line, eq + 1, err))
                return -1;
        }
        p += len + (eol ? 1 : 0);
    }
    return 0;
}
