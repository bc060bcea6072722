/* rnnsearch_options (api/rnnsearch.h): the defaults (the command line's),
 * the size that lets the structure grow at its end, each field's range, and
 * the setters bindings use instead of the layout. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "api/api_options.h"
#include "search/decode.h"
#include "search/translate.h"

int rs_api_fail(rnnsearch_error *err, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* The longest remove_bpe marker taken (the command line takes any; a marker
 * is a few bytes, and this bounds the walk over a string never ended). */
#define MARKER_MAX 256
/* The longest shortlist path taken (the command line's). */
#define SHORTLIST_PATH_MAX 4095
/* The first version's structure: size and the eight fields up to
 * replace_unk. A smaller size is not a structure rnnsearch_options_init
 * filled. */
#define OPTIONS_SIZE_1 (offsetof(rnnsearch_options, replace_unk) + sizeof(int))
/* Above this, opt->size is taken for memory that was never initialised: no
 * version's structure will be that large. */
#define OPTIONS_SIZE_MAX 4096

/* One row per field: what rnnsearch_options_set names and
 * rnnsearch_options_check bounds (the command line's ranges, and 0 for
 * "automatic" where the library has it). */
typedef struct {
    const char *name;
    size_t offset;
    int is_float;
    double min, max;
} option_field;

static const option_field option_fields[] = {
    {"beam", offsetof(rnnsearch_options, beam), 0, 1, RS_MAX_BEAM},
    {"n_best", offsetof(rnnsearch_options, n_best), 0, 1, RS_MAX_BEAM},
    {"length_penalty", offsetof(rnnsearch_options, length_penalty), 1, -RS_MAX_LENGTH_PENALTY,
     RS_MAX_LENGTH_PENALTY},
    {"max_len", offsetof(rnnsearch_options, max_len), 0, 0, RS_MAX_LENGTH},
    {"max_src_len", offsetof(rnnsearch_options, max_src_len), 0, 0, RS_MAX_LENGTH},
    {"batch_size", offsetof(rnnsearch_options, batch_size), 0, 1, RS_MAX_BATCH},
    {"alignment", offsetof(rnnsearch_options, alignment), 0, 0, 1},
    {"replace_unk", offsetof(rnnsearch_options, replace_unk), 0, 0, 1},
    {"int8", offsetof(rnnsearch_options, int8), 0, 0, 1},
    {"shortlist_first", offsetof(rnnsearch_options, shortlist_first), 0, -1,
     RNNSEARCH_MAX_SHORTLIST},
    {"shortlist_best", offsetof(rnnsearch_options, shortlist_best), 0, -1, RNNSEARCH_MAX_SHORTLIST},
};
enum { N_OPTION_FIELDS = sizeof option_fields / sizeof option_fields[0] };

/* Whether v lies in the field's range (and is whole, for an integer field);
 * a message naming the field when it does not. */
static int check_field(const option_field *f, double v, rnnsearch_error *err)
{
    if (isfinite(v) && v >= f->min && v <= f->max && (f->is_float || v == floor(v)))
        return 0;
    if (f->is_float)
        return rs_api_fail(err, "%s: %.15g is not a number from %g to %g", f->name, v, f->min,
                           f->max);
    /* A whole number prints whole (2147483647, not 2.14748e+09). */
    if (isfinite(v) && v == floor(v) && fabs(v) < 1e18)
        return rs_api_fail(err, "%s: %.0f is not an integer from %.0f to %.0f", f->name, v, f->min,
                           f->max);
    return rs_api_fail(err, "%s: %g is not an integer from %.0f to %.0f", f->name, v, f->min,
                       f->max);
}

static double field_value(const rnnsearch_options *opt, const option_field *f)
{
    const char *at = (const char *)opt + f->offset;
    if (f->is_float) {
        float x;
        memcpy(&x, at, sizeof x);
        return x;
    }
    int i;
    memcpy(&i, at, sizeof i);
    return i;
}

static void defaults(rnnsearch_options *opt)
{
    rs_translate_options d;
    rs_translate_options_default(&d);
    *opt = (rnnsearch_options){.size = sizeof *opt,
                               .beam = d.beam,
                               .n_best = d.n_best,
                               .length_penalty = d.length_penalty,
                               .max_len = d.max_len,
                               .max_src_len = d.max_src_len,
                               .batch_size = d.batch_size,
                               .alignment = d.want_alignment,
                               .replace_unk = d.replace_unk,
                               .remove_bpe = d.remove_bpe};
}

int rnnsearch_options_init(rnnsearch_options *opt, size_t size, rnnsearch_error *err)
{
    if (!opt)
        return rs_api_fail(err, "rnnsearch_options_init: no options (NULL)");
    if (size < OPTIONS_SIZE_1 || size > OPTIONS_SIZE_MAX)
        return rs_api_fail(err,
                           "rnnsearch_options_init: a size of %zu bytes is not that of an "
                           "rnnsearch_options (pass sizeof the structure)",
                           size);
    rnnsearch_options d;
    defaults(&d);
    d.size = size;
    /* The caller's structure may be shorter (an older header) or longer (a
     * newer one) than this library's: write exactly size bytes, the fields
     * this library does not know zero, which is their default. */
    const size_t known = size < sizeof d ? size : sizeof d;
    memcpy(opt, &d, known);
    if (size > known)
        memset((char *)opt + known, 0, size - known);
    return 0;
}

size_t rnnsearch_options_size(void)
{
    return sizeof(rnnsearch_options);
}

/* A copy of the caller's options in this library's layout: its first size
 * bytes over the defaults, after checking that size is one
 * rnnsearch_options_init wrote and that nothing this library does not know
 * is set. */
static int options_size(const rnnsearch_options *opt, size_t *size, rnnsearch_error *err)
{
    *size = opt->size;
    if (*size < OPTIONS_SIZE_1 || *size > OPTIONS_SIZE_MAX)
        return rs_api_fail(err,
                           "the options' size is %zu bytes: fill them with "
                           "rnnsearch_options_init(&opt, sizeof opt, …) first",
                           *size);
    return 0;
}

int rs_api_options_read(const rnnsearch_options *opt, rnnsearch_options *o, rnnsearch_error *err)
{
    defaults(o);
    if (!opt)
        return 0;
    size_t size;
    if (options_size(opt, &size, err))
        return -1;
    const size_t known = size < sizeof *o ? size : sizeof *o;
    memcpy(o, opt, known);
    for (size_t i = known; i < size; i++)
        if (((const unsigned char *)opt)[i])
            return rs_api_fail(
                err,
                "the options set a field at byte %zu, which librnnsearch %s does not "
                "know (it knows %zu bytes): a newer rnnsearch.h's field needs a "
                "newer library",
                i, RNNSEARCH_VERSION, sizeof *o);
    o->size = sizeof *o;
    return 0;
}

int rnnsearch_options_set(rnnsearch_options *opt, const char *name, double value,
                          rnnsearch_error *err)
{
    if (!opt || !name)
        return rs_api_fail(err, "rnnsearch_options_set: no options or no name (NULL)");
    size_t size;
    if (options_size(opt, &size, err))
        return -1;
    if (!strcmp(name, "remove_bpe") || !strcmp(name, "shortlist"))
        return rs_api_fail(err,
                           "rnnsearch_options_set: %s is a text: set it with "
                           "rnnsearch_options_set_text",
                           name);
    if (!strcmp(name, "weights") || !strcmp(name, "n_weights"))
        return rs_api_fail(err, "rnnsearch_options_set: set the weights with "
                                "rnnsearch_options_set_weights");
    for (int i = 0; i < N_OPTION_FIELDS; i++) {
        const option_field *f = &option_fields[i];
        if (strcmp(name, f->name))
            continue;
        if (f->offset + sizeof(int) > size)
            return rs_api_fail(err, "rnnsearch_options_set: %s lies beyond the caller's options",
                               name);
        if (check_field(f, value, err))
            return -1;
        char *at = (char *)opt + f->offset;
        if (f->is_float) {
            const float x = (float)value;
            memcpy(at, &x, sizeof x);
        } else {
            const int x = (int)value;
            memcpy(at, &x, sizeof x);
        }
        return 0;
    }
    return rs_api_fail(err, "rnnsearch_options_set: no option is called '%.64s'", name);
}

/* A remove_bpe marker: NULL (none), or 1 … MARKER_MAX bytes. */
static int check_marker(const char *marker, rnnsearch_error *err)
{
    if (!marker)
        return 0;
    if (!*marker)
        return rs_api_fail(err, "remove_bpe: the marker is empty (NULL for none)");
    if (strnlen(marker, MARKER_MAX + 1) > MARKER_MAX)
        return rs_api_fail(err, "remove_bpe: the marker is longer than %d bytes", MARKER_MAX);
    return 0;
}

/* A shortlist file: NULL (none), or a path of 1 … SHORTLIST_PATH_MAX bytes. */
static int check_shortlist_path(const char *path, rnnsearch_error *err)
{
    if (!path)
        return 0;
    if (!*path)
        return rs_api_fail(err, "shortlist: the file name is empty (NULL for none)");
    if (strnlen(path, SHORTLIST_PATH_MAX + 1) > SHORTLIST_PATH_MAX)
        return rs_api_fail(err, "shortlist: the file name is longer than %d bytes",
                           SHORTLIST_PATH_MAX);
    return 0;
}

/* weights and n_weights: both unset, or count 1 … RNNSEARCH_MAX_MODELS
 * weights that rs_ensemble_weights_check takes (the command line's). */
static int check_weights(const float *weights, int count, rnnsearch_error *err)
{
    rs_error e;
    if (!weights && count == 0)
        return 0;
    if (!weights || count < 1 || count > RNNSEARCH_MAX_MODELS)
        return rs_api_fail(err,
                           "weights: %d weights (or a NULL array): give 1 to %d, one per model",
                           count, RNNSEARCH_MAX_MODELS);
    if (rs_ensemble_weights_check(weights, count, &e))
        return rs_api_fail(err, "weights: %s", e.msg);
    return 0;
}

int rnnsearch_options_set_weights(rnnsearch_options *opt, const float *weights, int count,
                                  rnnsearch_error *err)
{
    if (!opt)
        return rs_api_fail(err, "rnnsearch_options_set_weights: no options (NULL)");
    size_t size;
    if (options_size(opt, &size, err))
        return -1;
    if (offsetof(rnnsearch_options, n_weights) + sizeof count > size)
        return rs_api_fail(err,
                           "rnnsearch_options_set_weights: the weights lie beyond the caller's "
                           "options (%zu bytes: an older header's)",
                           size);
    if (check_weights(weights, count, err))
        return -1;
    memcpy((char *)opt + offsetof(rnnsearch_options, weights), &weights, sizeof weights);
    memcpy((char *)opt + offsetof(rnnsearch_options, n_weights), &count, sizeof count);
    return 0;
}

int rnnsearch_options_set_text(rnnsearch_options *opt, const char *name, const char *value,
                               rnnsearch_error *err)
{
    if (!opt || !name)
        return rs_api_fail(err, "rnnsearch_options_set_text: no options or no name (NULL)");
    size_t size;
    if (options_size(opt, &size, err))
        return -1;
    const int bpe = !strcmp(name, "remove_bpe");
    if (!bpe && strcmp(name, "shortlist"))
        return rs_api_fail(err, "rnnsearch_options_set_text: no text option is called '%.64s'",
                           name);
    const size_t at =
        bpe ? offsetof(rnnsearch_options, remove_bpe) : offsetof(rnnsearch_options, shortlist);
    if (at + sizeof value > size)
        return rs_api_fail(err,
                           "rnnsearch_options_set_text: %s lies beyond the caller's options (%zu "
                           "bytes: an older header's)",
                           name, size);
    if (bpe ? check_marker(value, err) : check_shortlist_path(value, err))
        return -1;
    memcpy((char *)opt + at, &value, sizeof value);
    return 0;
}

int rnnsearch_options_check(const rnnsearch_options *opt, rnnsearch_error *err)
{
    if (!opt)
        return rs_api_fail(err, "rnnsearch_options_check: no options (NULL)");
    rnnsearch_options o;
    if (rs_api_options_read(opt, &o, err))
        return -1;
    for (int i = 0; i < N_OPTION_FIELDS; i++)
        if (check_field(&option_fields[i], field_value(&o, &option_fields[i]), err))
            return -1;
    if (o.n_best > o.beam)
        return rs_api_fail(err, "n_best: %d is more than the beam (%d)", o.n_best, o.beam);
    if (!o.shortlist && (o.shortlist_first || o.shortlist_best))
        return rs_api_fail(err,
                           "shortlist_first and shortlist_best: sizes without a shortlist file");
    /* -1 is none (0 the default, 100): with neither, only the reserved ids. */
    if (o.shortlist && o.shortlist_first == -1 && o.shortlist_best == -1)
        return rs_api_fail(err, "shortlist: no first words and no best translations list no "
                                "word, and every translation would be empty");
    if (check_marker(o.remove_bpe, err) || check_shortlist_path(o.shortlist, err))
        return -1;
    return check_weights(o.weights, o.n_weights, err);
}
