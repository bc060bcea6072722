#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "common/fileio.h"
#include "common/settings.h"

void rs_settings_free(rs_settings *s)
{
    for (int i = 0; i < s->count; i++) {
        rs_setting *it = &s->items[i];
        free(it->section);
        free(it->key);
        for (int k = 0; k < it->count; k++)
            free(it->values[k]);
        free(it->values);
        free(it->value_lines);
    }
    free(s->items);
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
    rs_setting *items = realloc(s->items, (size_t)(s->count + 1) * sizeof *items);
    if (!items)
        return rs_fail(err, "out of memory"), NULL;
    s->items = items;
    rs_setting *it = &items[s->count];
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
    char **values = realloc(it->values, (size_t)(it->count + 1) * sizeof *values);
    if (values)
        it->values = values;
    int *lines = realloc(it->value_lines, (size_t)(it->count + 1) * sizeof *lines);
    if (lines)
        it->value_lines = lines;
    if (!values || !lines || !(values[it->count] = strndup(value, len)))
        return rs_fail(err, "out of memory");
    lines[it->count++] = line;
    return 0;
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
        line[strcspn(line, "#")] = 0;
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

typedef struct {
    const char *name;
    yaml_document_t *doc;
    rs_settings *out;
    rs_error *err;
} yaml_reader;

static int node_line(const yaml_node_t *n)
{
    return (int)n->start_mark.line + 1;
}

/* key: value, where value is a scalar or a list of scalars. */
static int add_yaml_setting(yaml_reader *r, const char *section, const yaml_node_t *key,
                            const yaml_node_t *value)
{
    const char *k = (const char *)key->data.scalar.value;
    if (value->type == YAML_MAPPING_NODE)
        return rs_fail(r->err,
                       "%s:%d: '%s' holds a mapping; a setting is a value or a list of values",
                       r->name, node_line(value), k);
    for (int i = 0; i < r->out->count; i++) {
        const rs_setting *it = &r->out->items[i];
        if (!strcmp(it->key, k) &&
            (section ? it->section && !strcmp(it->section, section) : !it->section))
            return rs_fail(r->err, "%s:%d: '%s' given twice%s%s%s (first on line %d)", r->name,
                           node_line(key), k, section ? " in " : "", section ? section : "",
                           section ? ":" : "", it->line);
    }
    rs_setting *it =
        add_setting(r->out, section, k, key->data.scalar.length, node_line(key), r->err);
    if (!it)
        return -1;
    if (value->type == YAML_SCALAR_NODE)
        return add_value(it, (const char *)value->data.scalar.value, value->data.scalar.length,
                         node_line(value), r->err);
    it->is_list = 1;
    for (yaml_node_item_t *p = value->data.sequence.items.start; p < value->data.sequence.items.top;
         p++) {
        const yaml_node_t *v = yaml_document_get_node(r->doc, *p);
        if (v->type != YAML_SCALAR_NODE)
            return rs_fail(r->err, "%s:%d: '%s': a list of values holds a %s", r->name,
                           node_line(v), k, v->type == YAML_MAPPING_NODE ? "mapping" : "list");
        if (add_value(it, (const char *)v->data.scalar.value, v->data.scalar.length, node_line(v),
                      r->err))
            return -1;
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
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top;
         p++) {
        const yaml_node_t *key = yaml_document_get_node(r->doc, p->key),
                          *value = yaml_document_get_node(r->doc, p->value);
        if (key->type != YAML_SCALAR_NODE)
            return rs_fail(r->err, "%s:%d: a key is a name, not a list or mapping", r->name,
                           node_line(key));
        if (value->type != YAML_MAPPING_NODE) {
            if (add_yaml_setting(r, NULL, key, value))
                return -1;
            continue;
        }
        const char *section = (const char *)key->data.scalar.value;
        for (int i = 0; i < r->out->count; i++)
            if (r->out->items[i].section && !strcmp(r->out->items[i].section, section))
                return rs_fail(r->err, "%s:%d: section '%s' given twice", r->name, node_line(key),
                               section);
        for (yaml_node_pair_t *q = value->data.mapping.pairs.start;
             q < value->data.mapping.pairs.top; q++) {
            const yaml_node_t *k = yaml_document_get_node(r->doc, q->key);
            if (k->type != YAML_SCALAR_NODE)
                return rs_fail(r->err, "%s:%d: a key is a name, not a list or mapping", r->name,
                               node_line(k));
            if (add_yaml_setting(r, section, k, yaml_document_get_node(r->doc, q->value)))
                return -1;
        }
    }
    return 0;
}

static int yaml_problem(const char *name, const yaml_parser_t *p, rs_error *err)
{
    if (p->error == YAML_MEMORY_ERROR)
        return rs_fail(err, "%s: out of memory", name);
    return rs_fail(err, "%s:%d: %s%s%s", name, (int)p->problem_mark.line + 1,
                   p->problem ? p->problem : "not YAML", p->context ? " " : "",
                   p->context ? p->context : "");
}

static int parse_yaml(const char *name, const char *text, size_t size, rs_settings *out,
                      rs_error *err)
{
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
    yaml_reader r = {name, &doc, out, err};
    const yaml_node_t *root = yaml_document_get_root_node(&doc);
    status = root ? read_root(&r, root) : 0; /* no document: an empty file */
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

int rs_settings_parse(const char *name, const unsigned char *data, size_t size, rs_settings *out,
                      rs_error *err)
{
    memset(out, 0, sizeof *out);
    const unsigned char *nul = memchr(data, 0, size);
    if (nul) {
        int line = 1;
        for (const unsigned char *p = data; p < nul; p++)
            line += *p == '\n';
        return rs_fail(err, "%s:%d: a NUL byte (a configuration file is text)", name, line);
    }
    /* A UTF-8 byte order mark, as some editors write, is not part of the first key. */
    if (size >= 3 && !memcmp(data, "\xEF\xBB\xBF", 3))
        data += 3, size -= 3;
    char *text = malloc(size + 1);
    if (!text)
        return rs_fail(err, "%s: out of memory", name);
    memcpy(text, data, size);
    text[size] = 0;
    out->yaml = !is_pairs(text);
    int status =
        out->yaml ? parse_yaml(name, text, size, out, err) : parse_pairs(name, text, out, err);
    free(text);
    if (status)
        rs_settings_free(out);
    return status;
}

int rs_settings_read(const char *path, rs_settings *out, rs_error *err)
{
    unsigned char *data;
    size_t size;
    memset(out, 0, sizeof *out);
    if (rs_read_file(path, &data, &size, err))
        return -1;
    int status = rs_settings_parse(path, data, size, out, err);
    free(data);
    return status;
}
