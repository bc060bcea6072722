#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "common/settings.h"
#include "common/utf8.h"

void rs_setting_free(rs_setting *it)
{
    free(it->section);
    free(it->key);
    for (int k = 0; k < it->count; k++)
        free(it->values[k]);
    free(it->values);
    free(it->value_lines);
    free(it->problem);
}

void rs_settings_free(rs_settings *s)
{
    for (int i = 0; i < s->count; i++)
        rs_setting_free(&s->items[i]);
    free(s->items);
    free(s->text);
    free(s->notes);
    memset(s, 0, sizeof *s);
}

const rs_setting *rs_settings_find(const rs_settings *s, const char *section, const char *key)
{
    for (int i = 0; i < s->count; i++) {
        const rs_setting *it = &s->items[i];
        if (!strcmp(it->key, key) &&
            (section ? it->section && !strcmp(it->section, section) : !it->section))
            return it;
    }
    return NULL;
}

/* A new setting at the end of s (values added by add_value). */
static rs_setting *add_setting(rs_settings *s, const char *section, const char *key, size_t key_len,
                               int line, rs_error *err)
{
    if (s->count == s->capacity) {
        const int capacity = s->capacity ? 2 * s->capacity : 16;
        rs_setting *items = realloc(s->items, (size_t)capacity * sizeof *items);
        if (!items)
            return rs_fail(err, "out of memory"), NULL;
        s->items = items;
        s->capacity = capacity;
    }
    rs_setting *it = &s->items[s->count];
    memset(it, 0, sizeof *it);
    it->line = line;
    it->key = strndup(key, key_len);
    it->section = section ? strdup(section) : NULL;
    s->count++; /* freed with s from here on */
    if (!it->key || (section && !it->section))
        return rs_fail(err, "out of memory"), NULL;
    return it;
}

static int add_value(rs_setting *it, const char *value, size_t len, int line, rs_error *err)
{
    if (it->count == it->capacity) {
        const int capacity = it->capacity ? 2 * it->capacity : 4;
        char **values = realloc(it->values, (size_t)capacity * sizeof *values);
        if (values)
            it->values = values;
        int *lines = realloc(it->value_lines, (size_t)capacity * sizeof *lines);
        if (lines)
            it->value_lines = lines;
        if (!values || !lines)
            return rs_fail(err, "out of memory");
        it->capacity = capacity;
    }
    if (!(it->values[it->count] = strndup(value, len)))
        return rs_fail(err, "out of memory");
    it->value_lines[it->count++] = line;
    return 0;
}

int rs_settings_add(rs_settings *s, const char *section, const char *key, const char *value,
                    int line, rs_error *err)
{
    rs_setting *it = add_setting(s, section, key, strlen(key), line, err);
    return it ? add_value(it, value, strlen(value), line, err) : -1;
}

/* ---- key = value lines -------------------------------------------------- */

/* "key = value" items, several to a line as the configuration printout writes
 * them: spaces around '=' are dropped, then the line splits at blanks. */
static int parse_pairs(const char *name, char *text, rs_settings *out, rs_error *err)
{
    int line_no = 0;
    for (char *line = text; line; line_no++) {
        char *eol = strchr(line, '\n');
        if (eol)
            *eol = 0;
        /* A comment starts at a '#' that begins the line or follows a blank,
         * as in YAML: out = run#1 names the folder run#1. */
        for (char *h = strchr(line, '#'); h; h = strchr(h + 1, '#'))
            if (h == line || h[-1] == ' ' || h[-1] == '\t') {
                *h = 0;
                break;
            }
        char *w = line;
        for (char *r = line; *r; r++) {
            const char *next = r + strspn(r, " \t");
            if ((*r == ' ' || *r == '\t') && (*next == '=' || (w > line && w[-1] == '=')))
                continue;
            *w++ = *r;
        }
        *w = 0;
        char *save = NULL;
        for (char *item = strtok_r(line, " \t\r", &save); item;
             item = strtok_r(NULL, " \t\r", &save)) {
            if (!strcmp(item, "configuration:"))
                continue;
            char *eq = strchr(item, '=');
            if (!eq || eq == item)
                return rs_fail(err, "%s:%d: '%s' is not key = value", name, line_no + 1, item);
            rs_setting *it = add_setting(out, NULL, item, (size_t)(eq - item), line_no + 1, err);
            if (!it || add_value(it, eq + 1, strlen(eq + 1), line_no + 1, err))
                return -1;
        }
        line = eol ? eol + 1 : NULL;
    }
    return 0;
}

/* Whether text is "key = value" lines: its first setting has an '=' before
 * any ':', or is the printout's "configuration:" line. */
static int is_pairs(const char *text)
{
    for (const char *line = text; *line;) {
        line += strspn(line, " \t\r");
        if (*line == '\n' || *line == '#') {
            line += strcspn(line, "\n");
            line += *line == '\n';
            continue;
        }
        if (*line == 0)
            break;
        if (!strncmp(line, "configuration:", 14))
            return 1;
        size_t len = strcspn(line, "\n");
        const char *eq = memchr(line, '=', len), *colon = memchr(line, ':', len);
        return eq && (!colon || eq < colon);
    }
    return 0;
}

/* ---- YAML ---------------------------------------------------------------- */

/* seen[i]: node i of doc (a mapping or a list) has been read. held: the
 * bytes of text the settings hold so far (sections, keys, values). */
typedef struct {
    const char *name;
    yaml_document_t *doc;
    rs_settings *out;
    rs_error *err;
    unsigned char *seen;
    size_t held;
} yaml_reader;

/* The most text a file's settings may hold. Without aliases it is the
 * file's text plus each setting's copy of its section and key prefix (a
 * 1 MiB file of 200,000 keys holds about 4 MB); an alias (*a) is a few
 * bytes of the file that the settings hold as a copy of its whole value at
 * each use, so 2,000 aliases of one 500 kB value (a 0.5 MB file) would hold
 * a gigabyte, 150,000 of them 75 GB. */
#define MAX_HELD ((size_t)16 * RS_SETTINGS_MAX_BYTES)

static int node_line(const yaml_node_t *n)
{
    return (int)n->start_mark.line + 1;
}

/* A scalar's "\0" escape decodes to a NUL byte, which would cut the key or
 * value short wherever it is read as a C string: refused, as a NUL byte in
 * the file is. */
static int has_nul(yaml_reader *r, const yaml_node_t *scalar, const char *key, const char *what)
{
    if (!memchr(scalar->data.scalar.value, 0, scalar->data.scalar.length))
        return 0;
    return rs_fail(r->err, "%s:%d: '%s': a NUL character (\\0) in a %s", r->name, node_line(scalar),
                   key, what);
}

/* A mapping or list is read once. libyaml gives an alias (*a) the node of
 * its anchor (&a) itself, not a copy, so a file whose aliases repeat
 * mappings of aliases of mappings ("billion laughs": 10 levels of 10 is a
 * 900-byte file) would be read as 10^10 settings, gigabytes and minutes
 * before any check: refused at the second reading. An alias of a single
 * value (dev: *t) costs one value, and stays. */
static int read_once(yaml_reader *r, const yaml_node_t *key, const yaml_node_t *value)
{
    unsigned char *seen = &r->seen[value - r->doc->nodes.start];
    if (!*seen) {
        *seen = 1;
        return 0;
    }
    return rs_fail(r->err,
                   "%s:%d: '%s': an alias of a mapping or list read before (an alias may "
                   "repeat a single value only; write the mapping or list out)",
                   r->name, node_line(key), (const char *)key->data.scalar.value);
}

/* Counts bytes more of text held against MAX_HELD. */
static int hold(yaml_reader *r, const yaml_node_t *key, size_t bytes)
{
    if (bytes <= MAX_HELD - r->held) {
        r->held += bytes;
        return 0;
    }
    return rs_fail(r->err,
                   "%s:%d: '%s': the settings would hold more than %zu bytes of text (an "
                   "alias copies its value at each use)",
                   r->name, node_line(key), (const char *)key->data.scalar.value, MAX_HELD);
}

static int add_yaml_setting(yaml_reader *r, const char *section, const char *prefix,
                            const yaml_node_t *key, const yaml_node_t *value);

/* A mapping inside a section, as Joey NMT nests its model (model: encoder:
 * embeddings: embedding_dim: 64): its settings get dotted keys under the
 * section ("encoder.embeddings.embedding_dim"), for the reader's caller to
 * name. Depth is bounded by the key length. */
static int add_yaml_mapping(yaml_reader *r, const char *section, const char *prefix,
                            const yaml_node_t *key, const yaml_node_t *value)
{
    char dotted[512];
    const int len = snprintf(dotted, sizeof dotted, "%s%s%s", prefix ? prefix : "",
                             prefix ? "." : "", (const char *)key->data.scalar.value);
    if (len < 0 || (size_t)len >= sizeof dotted)
        return rs_fail(r->err, "%s:%d: '%.40s…': a key nested too deep (%d characters at most)",
                       r->name, node_line(key), dotted, (int)sizeof dotted - 1);
    if (read_once(r, key, value))
        return -1;
    for (yaml_node_pair_t *q = value->data.mapping.pairs.start; q < value->data.mapping.pairs.top;
         q++) {
        const yaml_node_t *k = yaml_document_get_node(r->doc, q->key);
        if (k->type != YAML_SCALAR_NODE)
            return rs_fail(r->err, "%s:%d: a key is a name, not a list or mapping", r->name,
                           node_line(k));
        if (add_yaml_setting(r, section, dotted, k, yaml_document_get_node(r->doc, q->value)))
            return -1;
    }
    return 0;
}

/* key: value, where value is a scalar, a list of scalars or (in a section) a
 * mapping of such settings; prefix: the keys of the mappings it is in. */
static int add_yaml_setting(yaml_reader *r, const char *section, const char *prefix,
                            const yaml_node_t *key, const yaml_node_t *value)
{
    const char *k = (const char *)key->data.scalar.value;
    if (has_nul(r, key, k, "key"))
        return -1;
    if (value->type == YAML_MAPPING_NODE) /* at the top level, a mapping is a section */
        return add_yaml_mapping(r, section, prefix, key, value);
    if (value->type == YAML_SCALAR_NODE && has_nul(r, value, k, "value"))
        return -1;
    char dotted[512];
    const int len =
        snprintf(dotted, sizeof dotted, "%s%s%s", prefix ? prefix : "", prefix ? "." : "", k);
    if (len < 0 || (size_t)len >= sizeof dotted)
        return rs_fail(r->err, "%s:%d: '%.40s…': a key nested too deep (%d characters at most)",
                       r->name, node_line(key), dotted, (int)sizeof dotted - 1);
    if (hold(r, key,
             (size_t)len + (section ? strlen(section) : 0) +
                 (value->type == YAML_SCALAR_NODE ? value->data.scalar.length : 0)))
        return -1;
    rs_setting *it = add_setting(r->out, section, dotted, (size_t)len, node_line(key), r->err);
    if (!it)
        return -1;
    if (value->type == YAML_SCALAR_NODE)
        return add_value(it, (const char *)value->data.scalar.value, value->data.scalar.length,
                         node_line(value), r->err);
    it->is_list = 1;
    if (read_once(r, key, value))
        return -1;
    for (yaml_node_item_t *p = value->data.sequence.items.start; p < value->data.sequence.items.top;
         p++) {
        const yaml_node_t *v = yaml_document_get_node(r->doc, *p);
        if (v->type != YAML_SCALAR_NODE)
            return rs_fail(r->err, "%s:%d: '%s': a list of values holds a %s", r->name,
                           node_line(v), k, v->type == YAML_MAPPING_NODE ? "mapping" : "list");
        if (has_nul(r, v, k, "value") || hold(r, key, v->data.scalar.length) ||
            add_value(it, (const char *)v->data.scalar.value, v->data.scalar.length, node_line(v),
                      r->err))
            return -1;
    }
    return 0;
}

/* ---- repeats ------------------------------------------------------------- */

/* A name given more than once is found by sorting (section, key, order):
 * n log n, where a scan of the earlier settings for each new one took
 * seconds at 50,000 keys. */
typedef struct {
    const char *section; /* NULL at the top level */
    const char *key;
    int line, order; /* order: position in the file */
} named;

static int same_name(const named *x, const named *y)
{
    if (!x->section != !y->section)
        return x->section ? 1 : -1;
    int c = x->section ? strcmp(x->section, y->section) : 0;
    return c ? c : strcmp(x->key, y->key);
}

static int by_name_then_order(const void *a, const void *b)
{
    const named *x = a, *y = b;
    int c = same_name(x, y);
    return c ? c : (x->order > y->order) - (x->order < y->order);
}

/* Sorts e; of the names given twice, the repeat that comes first in the file
 * (its index in e, and in *first the index of that name's first occurrence),
 * or -1: the one a reader going down the file meets first. */
static int first_repeat(named *e, int n, int *first)
{
    qsort(e, (size_t)n, sizeof *e, by_name_then_order);
    int best = -1;
    for (int i = 1, start = 0; i < n; i++) {
        if (same_name(&e[start], &e[i])) {
            start = i;
            continue;
        }
        if (best < 0 || e[i].order < e[best].order)
            best = i, *first = start;
    }
    return best;
}

/* Appends the formatted line (and '\n') to s->notes. */
static int add_note(rs_settings *s, rs_error *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int add_note(rs_settings *s, rs_error *err, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    const size_t have = s->notes ? strlen(s->notes) : 0, add = strlen(line);
    char *notes = realloc(s->notes, have + add + 2);
    if (!notes)
        return rs_fail(err, "out of memory");
    memcpy(notes + have, line, add);
    memcpy(notes + have + add, "\n", 2);
    s->notes = notes;
    return 0;
}

/* A section given twice stops the reading (its keys would all be repeats):
 * the first in the file is the error. A key given again in a section (or at
 * the top level) is read as PyYAML reads it, and so as Joey NMT and
 * OpenNMT-py do: its last value, the earlier ones left out, with a note
 * naming both lines (s->notes). */
static int check_repeats(yaml_reader *r, named *sections, int n_sections)
{
    int section_first = 0;
    const int section = first_repeat(sections, n_sections, &section_first);
    if (section >= 0)
        return rs_fail(r->err, "%s:%d: section '%s' given twice (first on line %d)", r->name,
                       sections[section].line, sections[section].key, sections[section_first].line);
    rs_settings *s = r->out;
    named *keys = malloc(((size_t)s->count + 1) * sizeof *keys);
    if (!keys)
        return rs_fail(r->err, "%s: out of memory", r->name);
    for (int i = 0; i < s->count; i++)
        keys[i] = (named){s->items[i].section, s->items[i].key, s->items[i].line, i};
    qsort(keys, (size_t)s->count, sizeof *keys, by_name_then_order);
    /* [order]: -1 for a value given again later, else the line of the name's
     * first occurrence when this, its last, was a repeat (0: given once). */
    int *first = calloc((size_t)s->count + 1, sizeof *first);
    if (!first) {
        free(keys);
        return rs_fail(r->err, "%s: out of memory", r->name);
    }
    for (int i = 1, start = 0; i <= s->count; i++) {
        if (i < s->count && !same_name(&keys[start], &keys[i])) {
            first[keys[i - 1].order] = -1;
            continue;
        }
        if (i - 1 > start)
            first[keys[i - 1].order] = keys[start].line;
        start = i;
    }
    free(keys);
    int status = 0, kept = 0;
    for (int i = 0; i < s->count && !status; i++) {
        const rs_setting *it = &s->items[i];
        if (first[i] > 0)
            status = add_note(s, r->err,
                              "%s:%d: '%s' given again%s%s%s (first on line %d): its last value "
                              "is read, as PyYAML reads it",
                              r->name, it->line, it->key, it->section ? " in " : "",
                              it->section ? it->section : "", it->section ? ":" : "", first[i]);
    }
    for (int i = 0; i < s->count && !status; i++) {
        if (first[i] < 0)
            rs_setting_free(&s->items[i]);
        else
            s->items[kept++] = s->items[i];
    }
    if (!status)
        s->count = kept;
    free(first);
    return status;
}

/* The root's pairs: settings into r->out, sections' names into sections. */
static int read_pairs(yaml_reader *r, const yaml_node_pair_t *pairs, int n_pairs, named *sections,
                      int *n_sections)
{
    for (const yaml_node_pair_t *p = pairs; p < pairs + n_pairs; p++) {
        const yaml_node_t *key = yaml_document_get_node(r->doc, p->key),
                          *value = yaml_document_get_node(r->doc, p->value);
        if (key->type != YAML_SCALAR_NODE)
            return rs_fail(r->err, "%s:%d: a key is a name, not a list or mapping", r->name,
                           node_line(key));
        if (value->type != YAML_MAPPING_NODE) {
            if (add_yaml_setting(r, NULL, NULL, key, value))
                return -1;
            continue;
        }
        const char *section = (const char *)key->data.scalar.value;
        if (has_nul(r, key, section, "section name") || read_once(r, key, value))
            return -1;
        sections[*n_sections] = (named){NULL, section, node_line(key), *n_sections};
        ++*n_sections;
        for (yaml_node_pair_t *q = value->data.mapping.pairs.start;
             q < value->data.mapping.pairs.top; q++) {
            const yaml_node_t *k = yaml_document_get_node(r->doc, q->key);
            if (k->type != YAML_SCALAR_NODE)
                return rs_fail(r->err, "%s:%d: a key is a name, not a list or mapping", r->name,
                               node_line(k));
            if (add_yaml_setting(r, section, NULL, k, yaml_document_get_node(r->doc, q->value)))
                return -1;
        }
    }
    return 0;
}

/* The top-level mapping: sections (key: mapping) and top-level settings. */
static int read_root(yaml_reader *r, const yaml_node_t *root)
{
    if (root->type != YAML_MAPPING_NODE)
        return rs_fail(r->err,
                       "%s:%d: a configuration is a mapping of sections (data:, model:, "
                       "training:, …), not a %s",
                       r->name, node_line(root), root->type == YAML_SCALAR_NODE ? "value" : "list");
    const yaml_node_pair_t *pairs = root->data.mapping.pairs.start;
    const int n_pairs = (int)(root->data.mapping.pairs.top - pairs);
    named *sections = malloc(((size_t)n_pairs + 1) * sizeof *sections);
    if (!sections)
        return rs_fail(r->err, "%s: out of memory", r->name);
    int n_sections = 0, status = read_pairs(r, pairs, n_pairs, sections, &n_sections);
    if (!status)
        status = check_repeats(r, sections, n_sections);
    free(sections);
    return status;
}

static int yaml_problem(const char *name, const yaml_parser_t *p, rs_error *err)
{
    if (p->error == YAML_MEMORY_ERROR)
        return rs_fail(err, "%s: out of memory", name);
    return rs_fail(err, "%s:%d: %s%s%s", name, (int)p->problem_mark.line + 1,
                   p->problem ? p->problem : "not YAML", p->context ? " " : "",
                   p->context ? p->context : "");
}

/* Deeper than any configuration (Joey NMT's deepest, model: encoder:
 * embeddings: embedding_dim, is 4 levels under the root). */
enum { MAX_DEPTH = 64 };

/* Refuses a file nested deeper than MAX_DEPTH, reading its events before
 * libyaml loads it: libyaml's scanner takes time quadratic in the depth of
 * flow collections (it checks every open level at every token: "[[[…]]]"
 * 200,000 deep, a 400 kB file, took minutes), and it emits each event after
 * looking at most 1024 characters ahead, so the walk stops soon after the
 * limit. A file that is not YAML is left to the loader, which says why. */
static int check_depth(const char *name, const char *text, size_t size, rs_error *err)
{
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser))
        return rs_fail(err, "%s: out of memory", name);
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, size);
    int depth = 0, status = 0;
    for (int done = 0; !done && !status;) {
        yaml_event_t event;
        if (!yaml_parser_parse(&parser, &event))
            break;
        const yaml_event_type_t type = event.type;
        if (type == YAML_SEQUENCE_START_EVENT || type == YAML_MAPPING_START_EVENT) {
            if (++depth > MAX_DEPTH)
                status = rs_fail(err,
                                 "%s:%d: nested deeper than %d levels (a configuration is "
                                 "sections of settings)",
                                 name, (int)event.start_mark.line + 1, MAX_DEPTH);
        } else if (type == YAML_SEQUENCE_END_EVENT || type == YAML_MAPPING_END_EVENT)
            depth--;
        done = type == YAML_STREAM_END_EVENT;
        yaml_event_delete(&event);
    }
    yaml_parser_delete(&parser);
    return status;
}

static int parse_yaml(const char *name, const char *text, size_t size, rs_settings *out,
                      rs_error *err)
{
    if (check_depth(name, text, size, err))
        return -1;
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser))
        return rs_fail(err, "%s: out of memory", name);
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, size);
    int status = -1;
    if (!yaml_parser_load(&parser, &doc)) {
        yaml_problem(name, &parser, err);
        yaml_parser_delete(&parser);
        return -1;
    }
    yaml_reader r = {name, &doc, out, err, NULL, 0};
    const yaml_node_t *root = yaml_document_get_root_node(&doc);
    r.seen = calloc((size_t)(doc.nodes.top - doc.nodes.start) + 1, 1);
    if (!r.seen)
        status = rs_fail(err, "%s: out of memory", name);
    else
        status = root ? read_root(&r, root) : 0; /* no document: an empty file */
    free(r.seen);
    yaml_document_delete(&doc);
    if (status == 0 && root) {
        if (!yaml_parser_load(&parser, &doc))
            status = yaml_problem(name, &parser, err);
        else {
            const yaml_node_t *second = yaml_document_get_root_node(&doc);
            if (second)
                status = rs_fail(err, "%s:%d: a second YAML document ('---'); give one", name,
                                 node_line(second));
            yaml_document_delete(&doc);
        }
    }
    yaml_parser_delete(&parser);
    return status;
}

/* The line of data holding *at: line ends counted as the readers count them
 * (\n, \r\n or a lone \r). */
static int line_of(const unsigned char *data, const unsigned char *at)
{
    int line = 1;
    for (const unsigned char *p = data; p < at; p++)
        line += *p == '\n' || (*p == '\r' && (p + 1 == at || p[1] != '\n'));
    return line;
}

int rs_settings_parse(const char *name, const unsigned char *data, size_t size, rs_settings *out,
                      rs_error *err)
{
    memset(out, 0, sizeof *out);
    const unsigned char *nul = memchr(data, 0, size);
    if (nul)
        return rs_fail(err, "%s:%d: a NUL byte (a configuration file is text)", name,
                       line_of(data, nul));
    /* Found here rather than by libyaml, whose reader names line 1 whatever
     * the line of the bad byte. */
    const size_t bad = rs_utf8_invalid(data, size);
    if (bad < size)
        return rs_fail(err, "%s:%d: not UTF-8 (byte 0x%02x)", name, line_of(data, data + bad),
                       data[bad]);
    /* A UTF-8 byte order mark, as some editors write, is not part of the first key. */
    if (size >= 3 && !memcmp(data, "\xEF\xBB\xBF", 3))
        data += 3, size -= 3;
    char *text = malloc(size + 1);
    if (!text)
        return rs_fail(err, "%s: out of memory", name);
    /* Every line end as '\n' (docs/guarantees.md: a line ends at \n, \r\n or a
     * lone \r), so that both readers below, and their line numbers, see one kind. */
    size_t kept = 0;
    for (size_t i = 0; i < size; i++)
        if (data[i] != '\r')
            text[kept++] = (char)data[i];
        else if (i + 1 == size || data[i + 1] != '\n')
            text[kept++] = '\n';
    size = kept;
    text[size] = 0;
    out->yaml = !is_pairs(text);
    int status =
        out->yaml ? parse_yaml(name, text, size, out, err) : parse_pairs(name, text, out, err);
    free(text);
    if (status)
        rs_settings_free(out);
    return status;
}

void rs_settings_write_pair(FILE *out, const char *key, const char *value)
{
    const unsigned char *v = (const unsigned char *)value;
    int plain = *v && (isalnum(*v) || *v == '/' || *v == '_' || *v >= 0x80);
    for (const unsigned char *p = v; plain && *p; p++)
        plain = isalnum(*p) || *p >= 0x80 || strchr("._/+-~,=", *p);
    if (plain && !strstr(value, "\xC2\x85") && !strstr(value, "\xE2\x80\xA8") &&
        !strstr(value, "\xE2\x80\xA9") && !strstr(value, "\xEF\xBB\xBF")) {
        fprintf(out, "  %s: %s\n", key, value);
        return;
    }
    fprintf(out, "  %s: \"", key);
    for (const unsigned char *p = v; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(out, "\\%c", *p);
        else if (*p < 0x20 || *p == 0x7F)
            fprintf(out, "\\x%02x", *p);
        else if (p[0] == 0xC2 && p[1] == 0x85)
            fputs("\\N", out), p++;
        else if (p[0] == 0xE2 && p[1] == 0x80 && (p[2] == 0xA8 || p[2] == 0xA9))
            fprintf(out, "\\%c", p[2] == 0xA8 ? 'L' : 'P'), p += 2;
        else if (p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF)
            fputs("\\uFEFF", out), p += 2;
        else
            fputc(*p, out);
    }
    fputs("\"\n", out);
}
