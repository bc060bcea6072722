/* Reading checkpoint files: see docs/checkpoint-format.md for the byte
 * layout (checkpoint_save.c writes them).
 *
 * In short: header (magic, version, section count, file size), named
 * length-prefixed sections, and a CRC-32 of everything before it. Integers and
 * floats are little-endian. Loading reads the fixed header first (magic,
 * version, size against the file's), then the rest front to back once,
 * keeping the sections it needs (not the Adam moments when only the model is
 * wanted), checks the checksum before reading any section's contents, then
 * checks every section against the layout computed from the stored
 * configuration. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/byteorder.h"
#include "model/checkpoint.h"
#include "model/checkpoint_sections.h"
#include "model/codec.h"
#include "common/crc32.h"
#include "common/fileio.h"

const char *const rs_checkpoint_section_names[S_COUNT] = {
    "config", "src_vocab", "tgt_vocab", "spm_src", "spm_tgt", "params",
    "adam_m", "adam_v",    "train",     "data",    "epoch",
};

typedef struct {
    const unsigned char *p, *end;
} cursor;

static size_t remaining(const cursor *c)
{
    return (size_t)(c->end - c->p);
}

static int r_u32(cursor *c, uint32_t *v)
{
    if (remaining(c) < 4)
        return -1;
    *v = rs_get_le32(c->p);
    c->p += 4;
    return 0;
}

/* Checks the source or target vocabulary section and fills v (tokens in id order). */
static int load_vocab(const char *path, const char *which, cursor c, int expected, rs_vocab *v,
                      rs_error *err)
{
    uint32_t count;
    if (r_u32(&c, &count))
        return rs_fail(err, "%s: section %s is truncated", path, which);
    if ((int64_t)count != expected)
        return rs_fail(err, "%s: %s has %u tokens but the config says %d", path, which, count,
                       expected);
    if (rs_vocab_init(v, err))
        return -1;
    char *token = NULL;
    size_t token_cap = 0;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t len;
        if (r_u32(&c, &len) || len > remaining(&c)) {
            rs_fail(err, "%s: section %s is truncated at token %u", path, which, i);
            goto fail;
        }
        if (len == 0 || memchr(c.p, 0, len)) {
            rs_fail(err, "%s: %s token %u is empty or holds a NUL byte", path, which, i);
            goto fail;
        }
        if (len + 1 > token_cap) {
            char *bigger = realloc(token, len + 1);
            if (!bigger) {
                rs_fail(err, "out of memory reading %s", path);
                goto fail;
            }
            token = bigger;
            token_cap = len + 1;
        }
        memcpy(token, c.p, len);
        token[len] = 0;
        c.p += len;
        rs_error inner;
        if (rs_vocab_read_token(v, (int)i, token, &inner)) {
            rs_fail(err, "%s: %s %s", path, which, inner.msg);
            goto fail;
        }
    }
    if (remaining(&c)) {
        rs_fail(err, "%s: section %s has %zu bytes after its last token", path, which,
                remaining(&c));
        goto fail;
    }
    free(token);
    return 0;
fail:
    free(token);
    rs_vocab_free(v);
    return -1;
}

/* A name read from the file, made fit for a message: control bytes become
 * '?', so that a crafted file cannot send escape sequences to a terminal. */
static const char *shown(char *name)
{
    for (char *p = name; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    return name;
}

/* Parses the params index against the layout: order[k] is the layout index of
 * the k-th tensor in the file (`count` of them). Leaves c at the floats. */
static int load_params_index(const char *path, cursor *c, const rs_layout *layout,
                             int order[RS_NUM_PARAMS], int *count, rs_error *err)
{
    uint32_t n;
    if (r_u32(c, &n))
        return rs_fail(err, "%s: section params is truncated", path);
    if (n > RS_NUM_PARAMS)
        return rs_fail(err, "%s: section params lists %u tensors, more than the %d there are", path,
                       n, RS_NUM_PARAMS);
    int seen[RS_NUM_PARAMS] = {0};
    for (uint32_t k = 0; k < n; k++) {
        uint32_t len, rows, cols;
        if (r_u32(c, &len) || len > MAX_NAME || len > remaining(c))
            return rs_fail(err, "%s: params index is truncated or corrupt at entry %u", path, k);
        char name[MAX_NAME + 1];
        memcpy(name, c->p, len);
        name[len] = 0;
        c->p += len;
        if (memchr(name, 0, len))
            return rs_fail(err, "%s: params index entry %u's name holds a NUL byte", path, k);
        if (r_u32(c, &rows) || r_u32(c, &cols))
            return rs_fail(err, "%s: params index is truncated at tensor '%s'", path, shown(name));
        int i = rs_param_index(name);
        if (i < 0)
            return rs_fail(err, "%s: unknown tensor '%s'", path, shown(name));
        const rs_tensor_info *t = &layout->info[i];
        if (!t->size)
            return rs_fail(err, "%s: tensor '%s' is stored but not part of this configuration",
                           path, name);
        if (seen[i])
            return rs_fail(err, "%s: tensor '%s' is stored twice", path, name);
        if (rows != (uint32_t)t->rows || cols != (uint32_t)t->cols)
            return rs_fail(err,
                           "%s: tensor '%s' has shape [%u, %u] but the configuration needs "
                           "[%d, %d] (cols 0: a vector)",
                           path, name, rows, cols, t->rows, t->cols);
        seen[i] = 1;
        order[k] = i;
    }
    for (int i = 0; i < RS_NUM_PARAMS; i++)
        if (layout->info[i].size && !seen[i])
            return rs_fail(err, "%s: tensor '%s' is missing", path, layout->info[i].name);
    if (remaining(c) != 4 * layout->total)
        return rs_fail(err, "%s: params data is %zu bytes, the tensors need %zu", path,
                       remaining(c), 4 * layout->total);
    *count = (int)n;
    return 0;
}

/* Copies floats stored tensor by tensor in `order` into a buffer of the layout. */
static void scatter(float *dst, const unsigned char *src, const rs_layout *layout, const int *order,
                    int count)
{
    for (int k = 0; k < count; k++) {
        const rs_tensor_info *t = &layout->info[order[k]];
        rs_f32_from_le(dst + t->offset, src, t->size);
        src += 4 * t->size;
    }
}

static int copy_blob(const cursor *c, char **blob, size_t *len, rs_error *err)
{
    /* One extra NUL so that text-minded readers never run off the end. */
    *blob = rs_calloc(remaining(c) + 1, 1, err);
    if (!*blob)
        return -1;
    memcpy(*blob, c->p, remaining(c));
    *len = remaining(c);
    return 0;
}

static void r_train(rs_train_state *s, const unsigned char *b)
{
    s->step = (int64_t)rs_get_le64(b + 0);
    s->epoch = (int32_t)rs_get_le32(b + 8);
    s->batches_done = (int64_t)rs_get_le64(b + 12);
    s->best_dev_loss = rs_f32_from_bits(rs_get_le32(b + 20));
    s->best_dev_bleu = rs_f32_from_bits(rs_get_le32(b + 24));
    s->bad_evals = (int32_t)rs_get_le32(b + 28);
    s->lr_scale = rs_f32_from_bits(rs_get_le32(b + 32));
    for (int i = 0; i < 4; i++)
        s->rng.s[i] = rs_get_le64(b + 36 + 8 * i);
}

static void r_data(rs_data_fingerprint *d, const unsigned char *b)
{
    uint32_t *const v[DATA_BYTES / 4] = {&d->train_pairs, &d->train_src_crc, &d->train_tgt_crc,
                                         &d->dev_pairs,   &d->dev_src_crc,   &d->dev_tgt_crc};
    for (int i = 0; i < DATA_BYTES / 4; i++)
        *v[i] = rs_get_le32(b + 4 * i);
    d->known = 1;
}

static void r_epoch(rs_train_state *s, const unsigned char *b)
{
    s->epoch_loss = rs_f64_from_bits(rs_get_le64(b));
    s->epoch_tokens = (int64_t)rs_get_le64(b + 8);
}

/* Turns "message" into "path: what: message". */
static void prefix_error(rs_error *err, const char *path, const char *what)
{
    if (!err)
        return;
    char inner[sizeof err->msg];
    snprintf(inner, sizeof inner, "%s", err->msg);
    rs_fail(err, "%s: %s: %s", path, what, inner);
}

/* Magic, version and declared size, against the real size of the file, from
 * its first min(size, HEADER_BYTES) bytes: what can be refused before the
 * whole file is read. */
static int check_header(const char *path, const unsigned char *head, size_t size, rs_error *err)
{
    if (size < 8 && !memcmp(head, RS_CHECKPOINT_MAGIC, size))
        return rs_fail(err, "%s: truncated: %zu bytes, less than a header", path, size);
    if (size < 8 || memcmp(head, RS_CHECKPOINT_MAGIC, 8))
        return rs_fail(err, "%s: not an rnnsearch checkpoint (bad magic number)", path);
    if (size < HEADER_BYTES + TRAILER_BYTES)
        return rs_fail(err, "%s: truncated: %zu bytes, less than a header", path, size);
    uint32_t version = rs_get_le32(head + 8);
    if (version != RS_CHECKPOINT_VERSION)
        return rs_fail(err, "%s: checkpoint format version %u; this program reads version %d", path,
                       version, RS_CHECKPOINT_VERSION);
    uint64_t declared = rs_get_le64(head + 16);
    if (declared > size)
        return rs_fail(err, "%s: truncated: %zu bytes of %llu", path, size,
                       (unsigned long long)declared);
    if (declared < size)
        return rs_fail(err, "%s: %llu unexpected bytes after the end of the checkpoint", path,
                       (unsigned long long)(size - declared));
    return 0;
}

/* A checkpoint's bytes, taken front to back once, from memory (parse) or from
 * a file (load), the CRC-32 updated on the way. A section is kept (a cursor
 * into the memory, or a copy of it read from the file) or passed over: a
 * file's passed-over bytes go through a small buffer and are never held, so
 * loading a model for translation does not read the Adam moments (two thirds
 * of a training checkpoint) into memory. */
typedef struct {
    const char *path;
    const unsigned char *mem; /* NULL: read from f */
    FILE *f;
    size_t pos, size;
    uint32_t crc;
} source;

#define PASS_CHUNK (1u << 18)

/* n bytes into dst (NULL: passed over). */
static int take(source *s, unsigned char *dst, size_t n, rs_error *err)
{
    if (n > s->size - s->pos)
        return rs_fail(err, "%s: truncated", s->path);
    if (s->mem) {
        s->crc = rs_crc32_update(s->crc, s->mem + s->pos, n);
        if (dst)
            memcpy(dst, s->mem + s->pos, n);
        s->pos += n;
        return 0;
    }
    if (n == 0)
        return 0;
    /* Passed-over bytes go through a buffer of at most PASS_CHUNK bytes. */
    const size_t pass_len = n < PASS_CHUNK ? n : PASS_CHUNK;
    unsigned char *pass = NULL;
    if (!dst && !(pass = malloc(pass_len)))
        return rs_fail(err, "%s: out of memory", s->path);
    while (n) {
        const size_t k = dst ? n : n < pass_len ? n : pass_len;
        unsigned char *to = dst ? dst : pass;
        if (rs_read_exact(s->f, to, k, s->path, err)) {
            free(pass);
            return -1;
        }
        s->crc = rs_crc32_update(s->crc, to, k);
        s->pos += k;
        n -= k;
        if (dst)
            dst += k;
    }
    free(pass);
    return 0;
}

/* A section's n bytes as a cursor: into the memory, or into a copy in *owned. */
static int keep(source *s, const char *name, size_t n, cursor *c, unsigned char **owned,
                rs_error *err)
{
    if (s->mem) {
        c->p = s->mem + s->pos;
        c->end = c->p + n;
        return take(s, NULL, n, err);
    }
    /* One byte more than asked: malloc(0) may give NULL. */
    if (!(*owned = malloc(n + 1))) {
        rs_fail_memory(err, (double)n, "the checkpoint's section %s", name);
        rs_error_name_file(err, s->path);
        return -1;
    }
    c->p = *owned;
    c->end = c->p + n;
    return take(s, *owned, n, err);
}

/* The section table, from the source's current position to the trailer;
 * kept sections get cursors, the others (Adam moments unless `state`) only
 * present[]. Returns -1 when the table does not hold together, -2 when the
 * bytes could not be read or held (an I/O error, no memory). */
static int walk_sections(source *s, int state, cursor sec[S_COUNT], size_t length[S_COUNT],
                         int present[S_COUNT], unsigned char *owned[S_COUNT], uint32_t count,
                         rs_error *err)
{
    const char *path = s->path;
    const size_t body_end = s->size - TRAILER_BYTES;
    for (uint32_t k = 0; k < count; k++) {
        unsigned char b[8];
        if (body_end - s->pos < 4)
            return rs_fail(err, "%s: section %u has a bad name length", path, k);
        if (take(s, b, 4, err))
            return -2;
        uint32_t len = rs_get_le32(b);
        if (len == 0 || len > MAX_NAME || len > body_end - s->pos)
            return rs_fail(err, "%s: section %u has a bad name length", path, k);
        char name[MAX_NAME + 1];
        if (take(s, (unsigned char *)name, len, err))
            return -2;
        name[len] = 0;
        if (memchr(name, 0, len))
            return rs_fail(err, "%s: section %u's name holds a NUL byte", path, k);
        if (body_end - s->pos < 8)
            return rs_fail(err, "%s: section %s is truncated", path, shown(name));
        if (take(s, b, 8, err))
            return -2;
        uint64_t dlen = rs_get_le64(b);
        if (dlen > body_end - s->pos)
            return rs_fail(err, "%s: section %s claims %llu bytes, only %zu remain", path,
                           shown(name), (unsigned long long)dlen, body_end - s->pos);
        int i = 0;
        while (i < S_COUNT && strcmp(rs_checkpoint_section_names[i], name))
            i++;
        if (i == S_COUNT)
            return rs_fail(err, "%s: unknown section '%s' in a version %d checkpoint", path,
                           shown(name), RS_CHECKPOINT_VERSION);
        if (present[i])
            return rs_fail(err, "%s: section %s appears twice", path, name);
        present[i] = 1;
        length[i] = (size_t)dlen;
        if ((i == S_ADAM_M || i == S_ADAM_V) && !state
                ? take(s, NULL, dlen, err)
                : keep(s, name, dlen, &sec[i], &owned[i], err))
            return -2;
    }
    if (s->pos != body_end)
        return rs_fail(err, "%s: %zu bytes after the last section", path, body_end - s->pos);
    return 0;
}

/* Header, sections and checksum; fills sec[] with each kept section's data
 * (p == NULL: absent or passed over). A section table that does not hold
 * together is reported as such only when the checksum is right: a corrupted
 * file is called corrupted, whatever its damage broke first. */
static int load_sections(source *s, int state, cursor sec[S_COUNT], size_t length[S_COUNT],
                         unsigned char *owned[S_COUNT], rs_error *err)
{
    const char *path = s->path;
    unsigned char head[HEADER_BYTES] = {0};
    size_t have = s->size < HEADER_BYTES ? s->size : HEADER_BYTES;
    if (take(s, head, have, err) || check_header(path, head, s->size, err))
        return -1;
    int present[S_COUNT] = {0};
    for (int i = 0; i < S_COUNT; i++) {
        sec[i].p = sec[i].end = NULL;
        length[i] = 0;
    }
    rs_error table;
    int bad = walk_sections(s, state, sec, length, present, owned, rs_get_le32(head + 12), &table);
    if (bad == -2) {
        if (err)
            *err = table;
        return -1;
    }
    if (bad && s->pos < s->size - TRAILER_BYTES &&
        take(s, NULL, s->size - TRAILER_BYTES - s->pos, err))
        return -1;
    unsigned char trailer[TRAILER_BYTES];
    const uint32_t actual = s->crc;
    if (take(s, trailer, TRAILER_BYTES, err))
        return -1;
    uint32_t stored = rs_get_le32(trailer);
    if (stored != actual)
        return rs_fail(err,
                       "%s: checksum mismatch (stored %08x, computed %08x): the file is "
                       "corrupted",
                       path, stored, actual);
    if (bad) {
        if (err)
            *err = table;
        return -1;
    }
    const int required[] = {S_CONFIG, S_SRC_VOCAB, S_TGT_VOCAB, S_PARAMS};
    for (size_t i = 0; i < sizeof required / sizeof *required; i++)
        if (!present[required[i]])
            return rs_fail(err, "%s: section %s is missing", path,
                           rs_checkpoint_section_names[required[i]]);
    int training = present[S_ADAM_M] + present[S_ADAM_V] + present[S_TRAIN];
    if (training != 0 && training != 3)
        return rs_fail(err,
                       "%s: incomplete training state (adam_m, adam_v and train go "
                       "together)",
                       path);
    if (present[S_DATA] && !training)
        return rs_fail(err,
                       "%s: section data (the training data's fingerprint) without the "
                       "training state it belongs to",
                       path);
    if (present[S_DATA] && remaining(&sec[S_DATA]) != DATA_BYTES)
        return rs_fail(err, "%s: section data is %zu bytes, not %d", path, remaining(&sec[S_DATA]),
                       DATA_BYTES);
    if (present[S_EPOCH] && !training)
        return rs_fail(err,
                       "%s: section epoch (the epoch's loss so far) without the training state "
                       "it belongs to",
                       path);
    if (present[S_EPOCH] && remaining(&sec[S_EPOCH]) != EPOCH_BYTES)
        return rs_fail(err, "%s: section epoch is %zu bytes, not %d", path,
                       remaining(&sec[S_EPOCH]), EPOCH_BYTES);
    return 0;
}

/* The configuration section into cfg: text without NUL bytes, parsed as
 * `key = value` lines, making a layout whose tensors the params section
 * holds (checked before anything of their size is allocated: a small file
 * cannot ask for gigabytes). */
static int load_config(const char *path, const cursor *sec, rs_config *cfg, rs_error *err)
{
    rs_config_defaults(cfg);
    const size_t text_len = remaining(&sec[S_CONFIG]);
    if (memchr(sec[S_CONFIG].p, 0, text_len))
        return rs_fail(err, "%s: the config section holds a NUL byte", path);
    char *text = rs_calloc(text_len + 1, 1, err);
    if (!text)
        return -1;
    memcpy(text, sec[S_CONFIG].p, text_len);
    const int bad = rs_config_parse(cfg, text, err);
    free(text);
    if (bad) {
        prefix_error(err, path, "config section");
        return -1;
    }
    rs_layout layout;
    if (rs_layout_init(&layout, &cfg->model, err)) {
        prefix_error(err, path, "stored configuration");
        return -1;
    }
    if (remaining(&sec[S_PARAMS]) / 4 < layout.total)
        return rs_fail(err, "%s: section params is %zu bytes, the configuration's tensors need %zu",
                       path, remaining(&sec[S_PARAMS]), 4 * layout.total);
    return 0;
}

/* A training state's sections (present together, or none: load_sections)
 * hold what the layout needs, also when they are passed over: a file that
 * training would refuse is refused for translation too. */
static int check_state_sizes(const char *path, const cursor *sec, const size_t *length,
                             const rs_layout *layout, rs_error *err)
{
    if (!sec[S_TRAIN].p)
        return 0;
    const size_t moments = 4 * layout->total;
    if (length[S_ADAM_M] != moments || length[S_ADAM_V] != moments)
        return rs_fail(err, "%s: Adam moments are %zu and %zu bytes, the parameters need %zu", path,
                       length[S_ADAM_M], length[S_ADAM_V], moments);
    if (length[S_TRAIN] != TRAIN_BYTES)
        return rs_fail(err, "%s: section train is %zu bytes, not %d", path, length[S_TRAIN],
                       TRAIN_BYTES);
    return 0;
}

/* The training state (Adam moments in the parameters' order, counters, data
 * fingerprint) into ts, allocated for m; a weights-only checkpoint leaves it
 * zeroed, from_checkpoint 0. */
static int load_state(const char *path, const cursor *sec, const rs_model *m, const int *order,
                      int count, rs_train_state *ts, rs_error *err)
{
    if (rs_train_state_alloc(ts, m, err))
        return -1;
    if (!sec[S_TRAIN].p)
        return 0;
    scatter(ts->adam_m, sec[S_ADAM_M].p, &m->layout, order, count);
    scatter(ts->adam_v, sec[S_ADAM_V].p, &m->layout, order, count);
    r_train(ts, sec[S_TRAIN].p);
    ts->from_checkpoint = 1;
    /* Absent in checkpoints written before it existed: not known. */
    if (sec[S_DATA].p)
        r_data(&ts->data, sec[S_DATA].p);
    /* Likewise the epoch's loss so far: none at an epoch's start, else not
     * known (NaN). */
    if (sec[S_EPOCH].p)
        r_epoch(ts, sec[S_EPOCH].p);
    else
        ts->epoch_loss = ts->batches_done ? NAN : 0.0;
    if (ts->epoch_tokens < 0)
        return rs_fail(err, "%s: section epoch counts %lld tokens", path,
                       (long long)ts->epoch_tokens);
    return 0;
}

/* The model (and training state) from the sections' bytes; `length` holds
 * every present section's size, also of those passed over. */
static int parse_sections(const char *path, const cursor *sec, const size_t *length,
                          rs_model *model, rs_train_state *state, rs_error *err)
{
    rs_model m;
    rs_train_state ts;
    rs_config cfg;
    int order[RS_NUM_PARAMS], count = 0;
    memset(&m, 0, sizeof m);
    memset(&ts, 0, sizeof ts);
    cursor params = sec[S_PARAMS];
    /* Configuration first: it gives the layout everything else is checked against. */
    if (load_config(path, sec, &cfg, err))
        goto fail;
    if (rs_model_alloc(&m, &cfg, err)) {
        prefix_error(err, path, "stored configuration");
        goto fail;
    }
    if (load_vocab(path, "src_vocab", sec[S_SRC_VOCAB], cfg.model.src_vocab, &m.src_vocab, err) ||
        load_vocab(path, "tgt_vocab", sec[S_TGT_VOCAB], cfg.model.tgt_vocab, &m.tgt_vocab, err))
        goto fail;
    /* shared_vocab=1: one vocabulary, stored twice, byte for byte. */
    if (cfg.model.shared_vocab &&
        (remaining(&sec[S_SRC_VOCAB]) != remaining(&sec[S_TGT_VOCAB]) ||
         memcmp(sec[S_SRC_VOCAB].p, sec[S_TGT_VOCAB].p, remaining(&sec[S_SRC_VOCAB])))) {
        rs_fail(err, "%s: shared_vocab=1, but the src_vocab and tgt_vocab sections differ", path);
        goto fail;
    }
    if (sec[S_SPM_SRC].p && copy_blob(&sec[S_SPM_SRC], &m.spm_src, &m.spm_src_len, err))
        goto fail;
    if (sec[S_SPM_TGT].p && copy_blob(&sec[S_SPM_TGT], &m.spm_tgt, &m.spm_tgt_len, err))
        goto fail;
    /* Text settings that cannot make a codec (unknown tokenizer, SentencePiece
     * model missing or unloadable) are refused here, naming the file. */
    rs_codec codec;
    if (rs_codec_for_model(&codec, &m, err))
        goto fail;
    rs_codec_free(&codec);
    if (load_params_index(path, &params, &m.layout, order, &count, err) ||
        check_state_sizes(path, sec, length, &m.layout, err))
        goto fail;
    scatter(m.params, params.p, &m.layout, order, count);
    if (rs_params_check_bounded(&m.layout, m.params, err))
        goto fail;
    if (state && load_state(path, sec, &m, order, count, &ts, err))
        goto fail;
    *model = m;
    if (state)
        *state = ts;
    return 0;
fail:
    rs_error_name_file(err, path);
    rs_train_state_free(&ts);
    rs_model_free(&m);
    return -1;
}

/* Both roads: the sections from the source, then the model from them. */
static int parse_source(source *s, rs_model *model, rs_train_state *state, rs_error *err)
{
    memset(model, 0, sizeof *model);
    if (state)
        memset(state, 0, sizeof *state);
    cursor sec[S_COUNT];
    unsigned char *owned[S_COUNT] = {0};
    size_t length[S_COUNT];
    /* Every message of load_sections names the file already. */
    int rc = load_sections(s, state != NULL, sec, length, owned, err);
    if (!rc)
        rc = parse_sections(s->path, sec, length, model, state, err);
    for (int i = 0; i < S_COUNT; i++)
        free(owned[i]);
    return rc;
}

int rs_checkpoint_load(const char *path, rs_model *model, rs_train_state *state, rs_error *err)
{
    memset(model, 0, sizeof *model);
    if (state)
        memset(state, 0, sizeof *state);
    source s = {.path = path};
    if (rs_open_regular(path, &s.f, &s.size, err))
        return -1;
    int rc = parse_source(&s, model, state, err);
    fclose(s.f);
    return rc;
}

int rs_checkpoint_parse(const char *path, const unsigned char *data, size_t size, rs_model *model,
                        rs_train_state *state, rs_error *err)
{
    source s = {.path = path, .mem = data, .size = size};
    return parse_source(&s, model, state, err);
}
