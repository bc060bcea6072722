#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"

const char *const rs_attention_names[] = {"additive", "general", "dot", "scaled-dot", "none", NULL};
const char *const rs_tokenizer_names[] = {"word", "char", "spm", "space", NULL};
const char *const rs_lr_schedule_names[] = {"constant", "noam",        "inverse-sqrt",
                                            "plateau",  "exponential", NULL};
const char *const rs_optimizer_names[] = {"adam", "sgd", "adadelta", "adagrad", NULL};


const char *const rs_post_process_names[] = {"none", "bpe", "sentencepiece", "joiner", NULL};

enum { T_INT, T_FLOAT, T_ENUM };

/* One row of RS_CONFIG_FIELDS as data. */
typedef struct {
    const char *key;
    int type;
    size_t offset;
    double def, lo, hi; /* T_INT, T_FLOAT */
    int open;           /* T_FLOAT: RS_OPEN_LOW / RS_OPEN_HIGH */
    const char *def_name;
    const char *const *names; /* T_ENUM */
} field;

/* The rows of the table; RS_CFG_PART names the part of rs_config (model or
 * train) a row's field is in. */
// clang-format off
#define RS_CFG_I(name, def, help, lo, hi)                                                          \
    {#name, T_INT, offsetof(rs_config, RS_CFG_PART.name), (def), (lo), (hi), RS_CLOSED, NULL, NULL},
#define RS_CFG_F(name, def, help, lo, hi, open)                                                    \
    {#name, T_FLOAT, offsetof(rs_config, RS_CFG_PART.name), (double)(def), (lo), (hi), (open),     \
     NULL, NULL},
#define RS_CFG_E(name, def, help, names)                                                           \
    {#name, T_ENUM, offsetof(rs_config, RS_CFG_PART.name), 0, 0, 0, RS_CLOSED, (def), (names)},
static const field fields[] = {
#define RS_CFG_PART model
    RS_MODEL_CONFIG_FIELDS(RS_CFG_I, RS_CFG_F, RS_CFG_E)
#undef RS_CFG_PART
#define RS_CFG_PART train
    RS_TRAIN_CONFIG_FIELDS(RS_CFG_I, RS_CFG_F, RS_CFG_E)
#undef RS_CFG_PART
};
// clang-format on
#undef RS_CFG_I
#undef RS_CFG_F
#undef RS_CFG_E
enum { FIELD_COUNT = sizeof fields / sizeof *fields };

const char *const rs_config_resumable[] = {"epochs",    "max_steps",  "max_minutes",
                                           "patience",  "save_every", "keep_last",
                                           "log_every", "threads",    NULL};

static int *int_at(rs_config *cfg, const field *f)
{
    return (int *)(void *)((char *)cfg + f->offset);
}

static float *float_at(rs_config *cfg, const field *f)
{
    return (float *)(void *)((char *)cfg + f->offset);
}

static const field *find(const char *key)
{
    for (int i = 0; i < FIELD_COUNT; i++)
        if (!strcmp(fields[i].key, key))
            return &fields[i];
    return NULL;
}

int rs_config_name_index(const char *const *names, const char *name)
{
    for (int k = 0; names[k]; k++)
        if (!strcmp(names[k], name))
            return k;
    return -1;
}

const char *rs_config_section(const char *key)
{
    static const char *const model[] = {"emb",       "hidden",         "att", "maxout",
                                        "attention", "tie_embeddings", NULL};
    static const char *const data[] = {"lowercase",    "tokenizer",    "subwords",
                                       "min_freq",     "max_vocab",    "max_len",
                                       "post_process", "shared_vocab", NULL};
    return rs_config_name_index(model, key) >= 0  ? "model"
           : rs_config_name_index(data, key) >= 0 ? "data"
                                                  : "training";
}

void rs_config_defaults(rs_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    for (int i = 0; i < FIELD_COUNT; i++) {
        const field *f = &fields[i];
        if (f->type == T_INT)
            *int_at(cfg, f) = (int)f->def;
        else if (f->type == T_FLOAT)
            *float_at(cfg, f) = (float)f->def;
        else
            *int_at(cfg, f) = rs_config_name_index(f->names, f->def_name);
    }
}

/* "one of a, b, c" into buf. */
static void list_names(const char *const *names, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = 0;
    for (int k = 0; names[k] && used < size; k++)
        used += (size_t)snprintf(buf + used, size - used, "%s%s", k ? ", " : "", names[k]);
}

/* The range of a numeric field: "from LO to HI" or "in [LO, HI)". */
static void range_text(const field *f, char *buf, size_t size)
{
    if (f->type == T_INT)
        snprintf(buf, size, "from %.0f to %.0f", f->lo, f->hi);
    else
        snprintf(buf, size, "in %c%g, %g%c", (f->open & RS_OPEN_LOW) ? '(' : '[', f->lo, f->hi,
                 (f->open & RS_OPEN_HIGH) ? ')' : ']');
}

void rs_config_range(const char *key, char *buf, size_t size)
{
    const field *f = find(key);
    buf[0] = 0;
    if (f && f->type != T_ENUM && !rs_config_is_flag(key) && size > 2) {
        snprintf(buf, size, ", ");
        range_text(f, buf + 2, size - 2);
    }
}

int rs_config_plain_number(const char *text)
{
    const char *p = text[0] == '-' ? text + 1 : text;
    /* strtod also reads hexadecimal ("0x10" is 16): a number here is decimal. */
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
        return 0;
    return (*p >= '0' && *p <= '9') || *p == '.';
}

/* Parses value into the field; `label` names it in messages (key or --option). */
static int set_field(rs_config *cfg, const field *f, const char *value, const char *label,
                     rs_error *err)
{
    char *end;
    errno = 0;
    if (f->type == T_INT) {
        long v = strtol(value, &end, 10);
        char range[64];
        range_text(f, range, sizeof range);
        if (errno || end == value || *end || !rs_config_plain_number(value) || v < (long)f->lo ||
            v > (long)f->hi)
            return rs_fail(err, "%s: '%s' is not an integer %s", label, value, range);
        *int_at(cfg, f) = (int)v;
        return 0;
    }
    if (f->type == T_FLOAT) {
        float v = strtof(value, &end);
        int below = (f->open & RS_OPEN_LOW) ? !(v > f->lo) : !(v >= f->lo);
        int above = (f->open & RS_OPEN_HIGH) ? !(v < f->hi) : !(v <= f->hi);
        char range[64];
        range_text(f, range, sizeof range);
        if (errno || end == value || *end || !rs_config_plain_number(value) || !isfinite(v) ||
            below || above)
            return rs_fail(err, "%s: '%s' is not a number %s", label, value, range);
        *float_at(cfg, f) = v == 0.0f ? 0.0f : v; /* "-0" is 0: settings compare and print alike */
        return 0;
    }
    int k = rs_config_name_index(f->names, value);
    if (k < 0) {
        char names[256];
        list_names(f->names, names, sizeof names);
        return rs_fail(err, "%s: '%s' is not one of %s", label, value, names);
    }
    *int_at(cfg, f) = k;
    return 0;
}

int rs_config_set(rs_config *cfg, const char *key, const char *value, rs_error *err)
{
    const field *f = find(key);
    if (!f)
        return rs_fail(err, "unknown configuration key '%s'", key);
    return set_field(cfg, f, value, key, err);
}

int rs_config_set_option(rs_config *cfg, const char *key, const char *value, rs_error *err)
{
    const field *f = find(key);
    if (!f)
        return rs_fail(err, "unknown configuration key '%s'", key);
    char label[RS_STR_MAX + 2] = "--";
    for (size_t i = 0; key[i] && i + 3 < sizeof label; i++)
        label[i + 2] = key[i] == '_' ? '-' : key[i], label[i + 3] = 0;
    return set_field(cfg, f, value, label, err);
}

int rs_config_is_flag(const char *key)
{
    const field *f = find(key);
    return f && f->type == T_INT && f->lo == 0 && f->hi == 1;
}

int rs_config_may_change_on_resume(const char *key)
{
    return rs_config_name_index(rs_config_resumable, key) >= 0;
}

float rs_config_default_lr(int optimizer)
{
    if (optimizer == RS_OPT_SGD || optimizer == RS_OPT_ADADELTA)
        return 1.0f;
    if (optimizer == RS_OPT_ADAGRAD)
        return 0.1f;
    rs_config adam; /* the table's default */
    rs_config_defaults(&adam);
    return adam.train.lr;
}

int rs_config_check(const rs_config *cfg, rs_error *err)
{
    if (cfg->model.subwords > 0 && cfg->model.tokenizer != RS_TOKENIZER_SPM)
        return rs_fail(err,
                       "--subwords %d conflicts with --tokenizer %s (subwords are "
                       "SentencePiece pieces: --tokenizer spm)",
                       cfg->model.subwords, rs_tokenizer_names[cfg->model.tokenizer]);
    /* W_out [Vt, l] is tgt_emb [Vt, m] itself. */
    if (cfg->model.tie_embeddings && cfg->model.maxout != cfg->model.emb)
        return rs_fail(err,
                       "--tie-embeddings needs --maxout equal to --emb (--maxout %d, --emb %d): "
                       "the output matrix is the target embedding matrix",
                       cfg->model.maxout, cfg->model.emb);
    /* noam and inverse-sqrt peak at step --warmup: without one there is no peak. */
    if ((cfg->train.lr_schedule == RS_LR_NOAM || cfg->train.lr_schedule == RS_LR_INVERSE_SQRT) &&
        cfg->train.warmup <= 0)
        return rs_fail(err,
                       "--lr-schedule %s needs --warmup N (N > 0: the step where the rate peaks)",
                       rs_lr_schedule_names[cfg->train.lr_schedule]);
    if (cfg->train.lr_schedule == RS_LR_PLATEAU && cfg->train.lr_decay >= 1.0f)
        return rs_fail(err, "--lr-schedule plateau needs --lr-decay F below 1 (the factor applied "
                            "after a dev evaluation without improvement)");
    return 0;
}

/* The value of field f as text: floats with %.9g (which round-trips) when
 * exact, else %g; names by name. */
static int format_field(const rs_config *cfg, const field *f, int exact, char *buf, size_t size)
{
    const char *base = (const char *)cfg + f->offset;
    int n;
    if (f->type == T_INT)
        n = snprintf(buf, size, "%d", *(const int *)(const void *)base);
    else if (f->type == T_FLOAT)
        n = snprintf(buf, size, exact ? "%.9g" : "%g", (double)*(const float *)(const void *)base);
    else
        n = snprintf(buf, size, "%s", f->names[*(const int *)(const void *)base]);
    return n < 0 || (size_t)n >= size ? -1 : 0;
}

void rs_config_write(const rs_config *cfg, FILE *out)
{
    char value[RS_STR_MAX];
    for (int i = 0; i < FIELD_COUNT; i++)
        if (format_field(cfg, &fields[i], 1, value, sizeof value) == 0)
            fprintf(out, "%s=%s\n", fields[i].key, value);
}

void rs_config_print(const rs_config *cfg, FILE *out)
{
    char value[RS_STR_MAX];
    for (int i = 0; i < FIELD_COUNT; i++)
        if (format_field(cfg, &fields[i], 0, value, sizeof value) == 0)
            fprintf(out, "%s%s=%s", i ? " " : "", fields[i].key, value);
    fputc('\n', out);
}

int rs_config_format(const rs_config *cfg, const char *key, char *buf, size_t size)
{
    const field *f = find(key);
    return f ? format_field(cfg, f, 0, buf, size) : -1;
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
