/* A recursive-descent JSON reader (RFC 8259) and a string writer. */
#include <locale.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/utf8.h"

typedef struct {
    const char *start, *p, *end;
    rs_error *err;
} parser;

static int fail_at(parser *ps, const char *what)
{
    return rs_fail(ps->err, "JSON: %s at byte %zu", what, (size_t)(ps->p - ps->start));
}

static void skip_space(parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

static int parse_value(parser *ps, rs_json *out, int depth);

static int hex4(parser *ps, unsigned *out)
{
    if (ps->end - ps->p < 4)
        return fail_at(ps, "truncated \\u escape");
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = ps->p[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return fail_at(ps, "bad hex digit in \\u escape");
    }
    ps->p += 4;
    *out = v;
    return 0;
}

static size_t put_utf8(char *dst, unsigned cp)
{
    if (cp < 0x80) {
        dst[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        dst[0] = (char)(0xC0 | (cp >> 6));
        dst[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        dst[0] = (char)(0xE0 | (cp >> 12));
        dst[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        dst[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    dst[0] = (char)(0xF0 | (cp >> 18));
    dst[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    dst[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    dst[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* After "\u": four hex digits, and a second "\uXXXX" when they are a high
 * surrogate; *cp the code point they make (never 0, which C strings cannot
 * hold). */
static int unicode_escape(parser *ps, unsigned *cp)
{
    if (hex4(ps, cp))
        return -1;
    if (*cp >= 0xDC00 && *cp <= 0xDFFF)
        return fail_at(ps, "lone low surrogate in \\u escape");
    if (*cp >= 0xD800 && *cp <= 0xDBFF) {
        unsigned lo;
        if (ps->end - ps->p < 2 || ps->p[0] != '\\' || ps->p[1] != 'u')
            return fail_at(ps, "high surrogate not followed by a low one");
        ps->p += 2;
        if (hex4(ps, &lo))
            return -1;
        if (lo < 0xDC00 || lo > 0xDFFF)
            return fail_at(ps, "high surrogate not followed by a low one");
        *cp = 0x10000 + ((*cp - 0xD800) << 10) + (lo - 0xDC00);
    }
    if (*cp == 0)
        return fail_at(ps, "\\u0000 is not supported in strings");
    return 0;
}

/* At the opening quote. Decodes into a new buffer: the output is never longer
 * than the input (an escape of 6 or 12 bytes yields at most 3 or 4). */
static int parse_string(parser *ps, char **out, size_t *out_len)
{
    ps->p++;
    const char *q = ps->p;
    while (q < ps->end && *q != '"') {
        if (*q == '\\' && ++q == ps->end)
            break;
        q++;
    }
    if (q >= ps->end)
        return fail_at(ps, "unterminated string");
    char *buf = malloc((size_t)(q - ps->p) + 1);
    if (!buf)
        return rs_fail(ps->err, "JSON: out of memory");
    size_t n = 0;
    while (*ps->p != '"') {
        unsigned char c = (unsigned char)*ps->p;
        if (c < 0x20) {
            free(buf);
            return fail_at(ps, "control character in string");
        }
        if (c >= 0x80) {
            size_t k =
                rs_utf8_sequence((const unsigned char *)ps->p, (const unsigned char *)ps->end);
            if (!k) {
                free(buf);
                return fail_at(ps, "invalid UTF-8 in string");
            }
            memcpy(buf + n, ps->p, k);
            n += k;
            ps->p += k;
            continue;
        }
        if (c != '\\') {
            buf[n++] = (char)c;
            ps->p++;
            continue;
        }
        ps->p++; /* the backslash; the scan above guarantees one more byte */
        char e = *ps->p++;
        switch (e) {
        case '"': buf[n++] = '"'; break;
        case '\\': buf[n++] = '\\'; break;
        case '/': buf[n++] = '/'; break;
        case 'b': buf[n++] = '\b'; break;
        case 'f': buf[n++] = '\f'; break;
        case 'n': buf[n++] = '\n'; break;
        case 'r': buf[n++] = '\r'; break;
        case 't': buf[n++] = '\t'; break;
        case 'u': {
            unsigned cp;
            if (unicode_escape(ps, &cp)) {
                free(buf);
                return -1;
            }
            n += put_utf8(buf + n, cp);
            break;
        }
        default:
            ps->p--;
            free(buf);
            return fail_at(ps, "unknown escape in string");
        }
    }
    ps->p++; /* closing quote */
    buf[n] = 0;
    *out = buf;
    *out_len = n;
    return 0;
}

/* Sets out->exact and out->u64 for the number text s..q (already checked
 * as JSON): whether it is a non-negative integer that fits a uint64_t, in
 * whatever form (7, 7.0, 700e-2, 0.7e1), and its exact value. Ids and sizes
 * need this, since a double holds integers exactly only up to 2^53. */
static void exact_integer(const char *s, const char *q, rs_json *out)
{
    out->exact = 0;
    out->u64 = 0;
    if (*s == '-')
        return;
    const char *p = s, *frac = NULL, *frac_end = NULL;
    while (p < q && *p >= '0' && *p <= '9')
        p++;
    const char *int_end = p;
    if (p < q && *p == '.') {
        frac = ++p;
        while (p < q && *p >= '0' && *p <= '9')
            p++;
        frac_end = p;
    }
    long exp = 0;
    if (p < q) { /* 'e' or 'E' */
        int neg = *++p == '-';
        p += *p == '-' || *p == '+';
        for (; p < q; p++)
            if ((exp = exp * 10 + (*p - '0')) > 100000)
                return; /* far beyond 20 digits either way */
        exp = neg ? -exp : exp;
    }
    /* The digits of the integer and fraction parts, value = digits · 10^shift. */
    long shift = exp - (frac ? (long)(frac_end - frac) : 0);
    uint64_t v = 0;
    const char *d = s;
    for (long left = (long)(int_end - s) + (frac ? (long)(frac_end - frac) : 0); left > 0;
         left--, d++) {
        if (d == int_end)
            d = frac;
        const unsigned digit = (unsigned)(*d - '0');
        if (left <= -shift) { /* a digit after the point: must be 0 */
            if (digit)
                return;
            continue;
        }
        if (v > (UINT64_MAX - digit) / 10)
            return;
        v = v * 10 + digit;
    }
    for (; shift > 0; shift--) {
        if (v > UINT64_MAX / 10)
            return;
        v *= 10;
    }
    out->exact = 1;
    out->u64 = v;
}

static int parse_number(parser *ps, rs_json *out)
{
    const char *s = ps->p, *q = s;
    int is_integer = 1;
    if (q < ps->end && *q == '-')
        q++;
    if (q < ps->end && *q == '0')
        q++;
    else if (q < ps->end && *q >= '1' && *q <= '9')
        while (q < ps->end && *q >= '0' && *q <= '9')
            q++;
    else
        return fail_at(ps, "malformed number");
    if (q < ps->end && *q == '.') {
        is_integer = 0;
        q++;
        if (q >= ps->end || *q < '0' || *q > '9')
            return fail_at(ps, "malformed number (digits must follow '.')");
        while (q < ps->end && *q >= '0' && *q <= '9')
            q++;
    }
    if (q < ps->end && (*q == 'e' || *q == 'E')) {
        is_integer = 0;
        q++;
        if (q < ps->end && (*q == '+' || *q == '-'))
            q++;
        if (q >= ps->end || *q < '0' || *q > '9')
            return fail_at(ps, "malformed number (digits must follow the exponent)");
        while (q < ps->end && *q >= '0' && *q <= '9')
            q++;
    }
    size_t len = (size_t)(q - s);
    out->type = RS_JSON_NUMBER;
    exact_integer(s, q, out);
    if (is_integer && *s != '-' && len <= 15) {
        /* Exact, and independent of the locale. */
        double v = 0;
        for (size_t i = 0; i < len; i++)
            v = v * 10 + (s[i] - '0');
        out->number = v;
    } else {
        /* strtod follows LC_NUMERIC: give it the locale's decimal point. */
        char small[64], *copy = len < sizeof small ? small : malloc(len + 1);
        if (!copy)
            return rs_fail(ps->err, "JSON: out of memory");
        memcpy(copy, s, len);
        copy[len] = 0;
        const char *point = localeconv()->decimal_point;
        char *dot = strchr(copy, '.');
        if (dot && point && point[0] && !point[1])
            *dot = point[0];
        out->number = strtod(copy, NULL);
        if (copy != small)
            free(copy);
    }
    ps->p = q;
    return 0;
}

static int literal(parser *ps, const char *word, rs_json_type type, rs_json *out)
{
    size_t n = strlen(word);
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n))
        return fail_at(ps, "unexpected character");
    ps->p += n;
    out->type = type;
    return 0;
}

/* Appends one slot to a container; returns its index or -1. */
static int grow_items(parser *ps, rs_json *v, size_t *capacity, int with_keys)
{
    if (v->count == *capacity) {
        size_t cap = *capacity ? 2 * *capacity : 8;
        rs_json *items = realloc(v->items, cap * sizeof *items);
        if (!items)
            return rs_fail(ps->err, "JSON: out of memory");
        v->items = items;
        if (with_keys) {
            char **keys = realloc(v->keys, cap * sizeof *keys);
            if (!keys)
                return rs_fail(ps->err, "JSON: out of memory");
            v->keys = keys;
        }
        *capacity = cap;
    }
    memset(&v->items[v->count], 0, sizeof v->items[0]);
    return 0;
}

static void free_contents(rs_json *v)
{
    free(v->string);
    for (size_t i = 0; i < v->count; i++) {
        free_contents(&v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    memset(v, 0, sizeof *v);
}

/* Steps past the opening bracket of an array or object; 1 when `close`
 * follows at once (consumed too): the container is empty. */
static int open_is_empty(parser *ps, char close)
{
    ps->p++;
    skip_space(ps);
    if (ps->p < ps->end && *ps->p == close) {
        ps->p++;
        return 1;
    }
    return 0;
}

/* After a member: 1 when a ',' announces another, 0 when `close` ends the
 * container (either consumed); otherwise fails with `what`. */
static int next_member(parser *ps, char close, const char *what)
{
    skip_space(ps);
    if (ps->p < ps->end && *ps->p == ',') {
        ps->p++;
        return 1;
    }
    if (ps->p < ps->end && *ps->p == close) {
        ps->p++;
        return 0;
    }
    return fail_at(ps, what);
}

static int parse_array(parser *ps, rs_json *out, int depth)
{
    size_t capacity = 0;
    out->type = RS_JSON_ARRAY;
    if (open_is_empty(ps, ']'))
        return 0;
    int more;
    do {
        if (grow_items(ps, out, &capacity, 0))
            return -1;
        /* Counted before parsing so that free_contents sees a partial item. */
        out->count++;
        if (parse_value(ps, &out->items[out->count - 1], depth + 1))
            return -1;
    } while ((more = next_member(ps, ']', "expected ',' or ']' in array")) > 0);
    return more;
}

/* The keys seen so far in one object, by hash (open addressing, at most half
 * full): each key is checked against the others in constant expected time,
 * so an object of k keys costs O(k), not O(k²). Slots hold key index + 1. */
typedef struct {
    size_t *slot, size;
} key_set;

static size_t key_hash(const char *key)
{
    size_t h = 1469598103934665603u; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)key; *p; p++)
        h = (h ^ *p) * 1099511628211u;
    return h;
}

/* Adds keys[n] (keys[0..n) are in the set); 1 when an equal key is there, -1 out of memory. */
static int key_set_add(key_set *set, char *const *keys, size_t n)
{
    if (2 * (n + 1) > set->size) {
        size_t size = set->size ? 2 * set->size : 16;
        size_t *slot = calloc(size, sizeof *slot);
        if (!slot)
            return -1;
        for (size_t i = 0; i < n; i++) {
            size_t j = key_hash(keys[i]) & (size - 1);
            while (slot[j])
                j = (j + 1) & (size - 1);
            slot[j] = i + 1;
        }
        free(set->slot);
        set->slot = slot;
        set->size = size;
    }
    size_t j = key_hash(keys[n]) & (set->size - 1);
    for (; set->slot[j]; j = (j + 1) & (set->size - 1))
        if (!strcmp(keys[set->slot[j] - 1], keys[n]))
            return 1;
    set->slot[j] = n + 1;
    return 0;
}

static int parse_members(parser *ps, rs_json *out, int depth, key_set *seen)
{
    size_t capacity = 0;
    int more;
    do {
        skip_space(ps);
        if (ps->p >= ps->end || *ps->p != '"')
            return fail_at(ps, "expected a string key in object");
        const char *key_at = ps->p;
        char *key;
        size_t key_len;
        if (parse_string(ps, &key, &key_len))
            return -1;
        if (grow_items(ps, out, &capacity, 1)) {
            free(key);
            return -1;
        }
        out->keys[out->count] = key;
        int dup = key_set_add(seen, out->keys, out->count);
        if (dup) {
            free(key);
            if (dup < 0)
                return fail_at(ps, "out of memory");
            ps->p = key_at;
            return fail_at(ps, "duplicate key in object");
        }
        out->count++;
        skip_space(ps);
        if (ps->p >= ps->end || *ps->p != ':')
            return fail_at(ps, "expected ':' after object key");
        ps->p++;
        if (parse_value(ps, &out->items[out->count - 1], depth + 1))
            return -1;
    } while ((more = next_member(ps, '}', "expected ',' or '}' in object")) > 0);
    return more;
}

static int parse_object(parser *ps, rs_json *out, int depth)
{
    out->type = RS_JSON_OBJECT;
    if (open_is_empty(ps, '}'))
        return 0;
    key_set seen = {NULL, 0};
    int rc = parse_members(ps, out, depth, &seen);
    free(seen.slot);
    return rc;
}

static int parse_value(parser *ps, rs_json *out, int depth)
{
    if (depth > RS_JSON_MAX_DEPTH)
        return fail_at(ps, "nesting too deep");
    skip_space(ps);
    if (ps->p >= ps->end)
        return fail_at(ps, "unexpected end of input");
    switch (*ps->p) {
    case '{': return parse_object(ps, out, depth);
    case '[': return parse_array(ps, out, depth);
    case '"': out->type = RS_JSON_STRING; return parse_string(ps, &out->string, &out->len);
    case 't': return literal(ps, "true", RS_JSON_TRUE, out);
    case 'f': return literal(ps, "false", RS_JSON_FALSE, out);
    case 'n': return literal(ps, "null", RS_JSON_NULL, out);
    default:
        if (*ps->p == '-' || (*ps->p >= '0' && *ps->p <= '9'))
            return parse_number(ps, out);
        return fail_at(ps, "unexpected character");
    }
}

rs_json *rs_json_parse(const char *text, size_t len, rs_error *err)
{
    parser ps = {text, text, text + len, err};
    rs_json *root = rs_calloc(1, sizeof *root, err);
    if (!root)
        return NULL;
    if (parse_value(&ps, root, 0)) {
        rs_json_free(root);
        return NULL;
    }
    skip_space(&ps);
    if (ps.p != ps.end) {
        fail_at(&ps, "unexpected data after the value");
        rs_json_free(root);
        return NULL;
    }
    return root;
}

void rs_json_free(rs_json *value)
{
    if (!value)
        return;
    free_contents(value);
    free(value);
}

const rs_json *rs_json_get(const rs_json *object, const char *key)
{
    if (!object || object->type != RS_JSON_OBJECT)
        return NULL;
    for (size_t i = 0; i < object->count; i++)
        if (!strcmp(object->keys[i], key))
            return &object->items[i];
    return NULL;
}

int rs_json_to_u64(const rs_json *value, uint64_t *out)
{
    if (!value || value->type != RS_JSON_NUMBER || !value->exact)
        return -1;
    *out = value->u64;
    return 0;
}

const char *rs_json_type_name(rs_json_type type)
{
    static const char *const names[] = {"null",   "false", "true",  "number",
                                        "string", "array", "object"};
    return (unsigned)type < sizeof names / sizeof *names ? names[type] : "?";
}

int rs_json_write_string(FILE *out, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    putc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\r': fputs("\\r", out); break;
        case '\t': fputs("\\t", out); break;
        case '\b': fputs("\\b", out); break;
        case '\f': fputs("\\f", out); break;
        default:
            if (*p < 0x20 || *p == 0x7F) {
                fputs("\\u00", out);
                putc(hex[*p >> 4], out);
                putc(hex[*p & 15], out);
            } else {
                putc(*p, out);
            }
        }
    }
    putc('"', out);
    return ferror(out) ? -1 : 0;
}

int rs_json_write_strings(FILE *out, const char *const *s, int n)
{
    putc('[', out);
    for (int k = 0; k < n; k++) {
        if (k)
            putc(',', out);
        rs_json_write_string(out, s[k]);
    }
    putc(']', out);
    return ferror(out) ? -1 : 0;
}
