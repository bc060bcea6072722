/* A segment as sacreBLEU sees it (see segments.h).
 *
 * sacreBLEU is Python: its text handling is defined by str.lower(),
 * str.rstrip(), str.split() and the `re` module working on code points. Each
 * of those is reproduced here on UTF-8 bytes, and each place where bytes and
 * code points could disagree says why they do not.
 *
 * N-grams are counted without a hash table: every n-gram is a substring of one
 * normalised buffer (tokens joined by single spaces for BLEU, the text without
 * whitespace for chrF), so a segment's n-grams are (pointer, length) spans that
 * are sorted and counted in runs. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <utf8proc.h>

#include "eval/segments.h"
#include "text/text.h"

/* ---- Python's notion of text ------------------------------------------ */

/* str.isspace(): what str.split() and str.rstrip() treat as whitespace (the
 * ASCII separators 0x1C-0x1F included, as in CPython). */
static int py_space(int32_t c)
{
    return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
           c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
           c == 0x202F || c == 0x205F || c == 0x3000;
}

/* Unicode Case_Ignorable, which Python's Final_Sigma rule skips over:
 * categories Mn Me Cf Lm Sk and the Word_Break classes MidLetter, MidNumLet
 * and Single_Quote. */
static int case_ignorable(int32_t c)
{
    switch (utf8proc_category(c)) {
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_ME:
    case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_SK: return 1;
    default: break;
    }
    switch (c) {
    case 0x27:
    case 0x2E:
    case 0x3A:
    case 0xB7:
    case 0x387:
    case 0x55F:
    case 0x5F4:
    case 0x2018:
    case 0x2019:
    case 0x2024:
    case 0x2027:
    case 0xFE13:
    case 0xFE52:
    case 0xFE55:
    case 0xFF07:
    case 0xFF0E:
    case 0xFF1A: return 1;
    default: return 0;
    }
}

/* Unicode Cased. utf8proc has no such property; letters of categories Lu Ll Lt
 * and anything with a case mapping (circled letters, Roman numerals) are, plus
 * what is Other_Lowercase or Other_Uppercase without a mapping and not
 * case-ignorable anyway: the ordinal indicators and the squared and
 * negative-circled capitals. (Checked against CPython 3.11 for every code
 * point it assigns.) */
static int cased(int32_t c)
{
    utf8proc_category_t cat = utf8proc_category(c);
    if (cat == UTF8PROC_CATEGORY_LU || cat == UTF8PROC_CATEGORY_LL || cat == UTF8PROC_CATEGORY_LT)
        return 1;
    return utf8proc_tolower(c) != c || utf8proc_toupper(c) != c || c == 0xAA || c == 0xBA ||
           (c >= 0x1F130 && c <= 0x1F149) || (c >= 0x1F150 && c <= 0x1F169) ||
           (c >= 0x1F170 && c <= 0x1F189);
}

static int check_utf8(const char *s, const char *what, rs_error *err)
{
    const utf8proc_uint8_t *p = (const utf8proc_uint8_t *)s;
    utf8proc_ssize_t n = (utf8proc_ssize_t)strlen(s);
    for (utf8proc_ssize_t i = 0; i < n;) {
        utf8proc_int32_t c;
        utf8proc_ssize_t k = utf8proc_iterate(p + i, n - i, &c);
        if (k < 0)
            return rs_fail(err, "%s is not valid UTF-8 (byte %ld)", what, (long)i + 1);
        i += k;
    }
    return 0;
}

/* Decodes valid UTF-8 (checked before) into code points; returns the count. */
static size_t decode(const char *s, int32_t *cps)
{
    const utf8proc_uint8_t *p = (const utf8proc_uint8_t *)s;
    utf8proc_ssize_t n = (utf8proc_ssize_t)strlen(s);
    size_t m = 0;
    for (utf8proc_ssize_t i = 0; i < n;)
        i += utf8proc_iterate(p + i, n - i, &cps[m++]);
    return m;
}

/* str.lower(): utf8proc's simple mapping plus the two places where Python's
 * full mapping differs from it, U+0130 (-> "i" U+0307) and capital sigma,
 * which becomes final sigma after a cased letter and not before one (the
 * Final_Sigma context, case-ignorable characters skipped on both sides).
 * Returns a malloc'd string. */
static char *py_lower(const char *s, rs_error *err)
{
    size_t n = strlen(s);
    int32_t *cps = rs_calloc(n + 1, sizeof *cps, err);
    /* Each code point becomes at most two, each at most 4 bytes. */
    char *out = cps ? rs_calloc(8 * n + 1, 1, err) : NULL;
    if (!out) {
        free(cps);
        return NULL;
    }
    size_t m = decode(s, cps), len = 0;
    for (size_t i = 0; i < m; i++) {
        int32_t c = cps[i];
        if (c == 0x130) {
            out[len++] = 'i';
            c = 0x307;
        } else if (c == 0x3A3) {
            size_t j = i;
            while (j > 0 && case_ignorable(cps[j - 1]))
                j--;
            int final = j > 0 && cased(cps[j - 1]);
            if (final) {
                j = i + 1;
                while (j < m && case_ignorable(cps[j]))
                    j++;
                final = j == m || !cased(cps[j]);
            }
            c = final ? 0x3C2 : 0x3C3;
        } else {
            c = utf8proc_tolower(c);
        }
        len += (size_t)utf8proc_encode_char(c, (utf8proc_uint8_t *)out + len);
    }
    out[len] = '\0';
    free(cps);
    return out;
}

size_t rs_bleu_rstrip_len(const char *s)
{
    const utf8proc_uint8_t *p = (const utf8proc_uint8_t *)s;
    utf8proc_ssize_t n = (utf8proc_ssize_t)strlen(s);
    size_t keep = 0;
    for (utf8proc_ssize_t i = 0; i < n;) {
        utf8proc_int32_t c;
        utf8proc_ssize_t k = utf8proc_iterate(p + i, n - i, &c);
        if (k < 0) {
            k = 1; /* an invalid byte is not whitespace */
            c = 0;
        }
        i += k;
        if (!py_space(c))
            keep = (size_t)i;
    }
    return keep;
}

/* ---- the mteval-v13a tokenizer (sacreBLEU's Tokenizer13a) -------------- */

/* str.replace(old, new) with new no longer than old, in place: one
 * left-to-right pass over non-overlapping matches, as Python does, so
 * "&amp;lt;" becomes "&lt;" in the &amp; pass and "<" only because the &lt;
 * pass comes after it. */
static void replace_all(char *s, const char *old, const char *new_)
{
    size_t lo = strlen(old), ln = strlen(new_);
    char *r = s, *w = s;
    while (*r) {
        if (strncmp(r, old, lo) == 0) {
            memcpy(w, new_, ln);
            w += ln;
            r += lo;
        } else {
            *w++ = *r++;
        }
    }
    *w = '\0';
}

/* The first 13a regex's class [\{-\~\[-\` -\&\(-\+\:-\@\/]: ASCII symbols
 * except ' - . , and the space, which the class does include. */
static int sym13a(unsigned char c)
{
    return (c >= 0x7B && c <= 0x7E) || (c >= 0x5B && c <= 0x60) || (c >= 0x20 && c <= 0x26) ||
           (c >= 0x28 && c <= 0x2B) || (c >= 0x3A && c <= 0x40) || c == 0x2F;
}

static int digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}
static int pc(unsigned char c)
{
    return c == '.' || c == ',';
}

/* Each re.sub() below matches one or two characters and is run as a scan that,
 * like re.sub, resumes after a match. Bytes give the same result as code
 * points: the classes that name characters are ASCII, so a multi-byte
 * character can only be the [^0-9] side of a pair; when it precedes . or , its
 * last byte takes that role, and when it follows, its lead byte does and its
 * continuation bytes, which no pattern can start with, are copied after it.
 * `out` has room for 3 bytes per input byte. */
static size_t sub_symbols(char *out, const char *s)
{
    size_t w = 0;
    for (; *s; s++) {
        if (sym13a((unsigned char)*s)) {
            out[w++] = ' ';
            out[w++] = *s;
            out[w++] = ' ';
        } else {
            out[w++] = *s;
        }
    }
    out[w] = '\0';
    return w;
}

static int nondigit(unsigned char c)
{
    return !digit(c);
}
static int dash(unsigned char c)
{
    return c == '-';
}

/* re.sub(r'(X)(Y)', r'\1 \2 ', s), or r' \1 \2' when space_first: where x
 * holds for a character and y for the next, the pair is written with a space
 * between them and one after it (before it when space_first). */
static size_t sub_pair(char *out, const char *s, int (*x)(unsigned char), int (*y)(unsigned char),
                       int space_first)
{
    size_t w = 0;
    while (*s) {
        if (x((unsigned char)s[0]) && s[1] && y((unsigned char)s[1])) {
            if (space_first)
                out[w++] = ' ';
            out[w++] = s[0];
            out[w++] = ' ';
            out[w++] = s[1];
            if (!space_first)
                out[w++] = ' ';
            s += 2;
        } else {
            out[w++] = *s++;
        }
    }
    out[w] = '\0';
    return w;
}

/* Tokenizer13a.__call__ up to the final split: returns a malloc'd string. */
static char *tokenize_13a(const char *line, size_t n, rs_error *err)
{
    /* The substitutions add 2 bytes per symbol or dash and 4 per period or
     * comma (the two middle ones can both split it), so 5x bounds them. */
    size_t cap = 5 * (n + 2) + 1;
    char *a = rs_calloc(cap, 1, err);
    char *b = a ? rs_calloc(cap, 1, err) : NULL;
    if (!b) {
        free(a);
        return NULL;
    }
    b[0] = ' ';
    memcpy(b + 1, line, n);
    b[n + 1] = '\0';
    char *t = b + 1;
    replace_all(t, "<skipped>", "");
    replace_all(t, "-\n", "");
    replace_all(t, "\n", " ");
    replace_all(t, "&quot;", "\"");
    replace_all(t, "&amp;", "&");
    replace_all(t, "&lt;", "<");
    replace_all(t, "&gt;", ">");
    strcat(b, " ");
    sub_symbols(a, b);
    sub_pair(b, a, nondigit, pc, 0); /* ([^0-9])([\.,]) -> "\1 \2 ": not after a digit */
    sub_pair(a, b, pc, nondigit, 1); /* ([\.,])([^0-9]) -> " \1 \2": not before a digit */
    sub_pair(b, a, digit, dash, 0);  /* ([0-9])(-) -> "\1 \2 ": a dash after a digit */
    free(a);
    return b;
}

/* ---- mteval-v14's international tokenizer (TokenizerV14International) - */

static int cat_number(int32_t c)
{
    const utf8proc_category_t k = utf8proc_category(c);
    return k == UTF8PROC_CATEGORY_ND || k == UTF8PROC_CATEGORY_NL || k == UTF8PROC_CATEGORY_NO;
}
static int not_number(int32_t c)
{
    return !cat_number(c);
}
static int cat_punct(int32_t c)
{
    const utf8proc_category_t k = utf8proc_category(c);
    return k >= UTF8PROC_CATEGORY_PC && k <= UTF8PROC_CATEGORY_PO;
}
static int cat_symbol(int32_t c)
{
    const utf8proc_category_t k = utf8proc_category(c);
    return k >= UTF8PROC_CATEGORY_SM && k <= UTF8PROC_CATEGORY_SO;
}

/* sub_pair on code points: re.sub(r'(X)(Y)', r'\1 \2 ', s), or r' \1 \2'
 * when space_first; out has room for 2 more per pair. Returns out's length. */
static size_t sub_pair_cp(int32_t *out, const int32_t *s, size_t n, int (*x)(int32_t),
                          int (*y)(int32_t), int space_first)
{
    size_t w = 0;
    for (size_t i = 0; i < n;) {
        if (i + 1 < n && x(s[i]) && y(s[i + 1])) {
            if (space_first)
                out[w++] = ' ';
            out[w++] = s[i];
            out[w++] = ' ';
            out[w++] = s[i + 1];
            if (!space_first)
                out[w++] = ' ';
            i += 2;
        } else {
            out[w++] = s[i++];
        }
    }
    return w;
}

/* TokenizerV14International.__call__ up to its split, and TokenizerChar's
 * (" ".join(line)): a malloc'd UTF-8 string for split_tokens. */
static char *tokenize_cp(const char *line, size_t n, int intl, rs_error *err)
{
    /* n bytes are at most n code points; the pair passes at most double
     * them and the symbol pass triples, so 12 (n + 1) hold every pass, and 4
     * bytes a code point (5 with char's spaces) their UTF-8. */
    const size_t cap = 12 * (n + 1);
    int32_t *a = rs_calloc(cap, sizeof *a, err);
    int32_t *b = a ? rs_calloc(cap, sizeof *b, err) : NULL;
    char *out = b ? rs_calloc(4 * cap + 1, 1, err) : NULL;
    if (!out) {
        free(a);
        free(b);
        return NULL;
    }
    char *copy = (char *)b; /* the line's first n bytes, NUL-terminated, for decode() */
    memcpy(copy, line, n);
    copy[n] = '\0';
    size_t m = decode(copy, a);
    if (intl) {
        /* (\P{N})(\p{P}) -> "\1 \2 "; (\p{P})(\P{N}) -> " \1 \2"; (\p{S}) -> " \1 " */
        m = sub_pair_cp(b, a, m, not_number, cat_punct, 0);
        m = sub_pair_cp(a, b, m, cat_punct, not_number, 1);
        size_t w = 0;
        for (size_t i = 0; i < m; i++) {
            if (cat_symbol(a[i])) {
                b[w++] = ' ';
                b[w++] = a[i];
                b[w++] = ' ';
            } else {
                b[w++] = a[i];
            }
        }
        memcpy(a, b, w * sizeof *a);
        m = w;
    }
    size_t len = 0;
    for (size_t i = 0; i < m; i++) {
        len += (size_t)utf8proc_encode_char(a[i], (utf8proc_uint8_t *)out + len);
        if (!intl)
            out[len++] = ' ';
    }
    out[len] = '\0';
    free(a);
    free(b);
    return out;
}

/* ---- segments as tokens or characters ---------------------------------- */

void rs_units_free(rs_units *u)
{
    free(u->text);
    free(u->start);
    free(u->len);
    memset(u, 0, sizeof *u);
}

/* str.split() of s, rejoined with single spaces. */
static int split_tokens(rs_units *u, const char *s, rs_error *err)
{
    size_t n = strlen(s);
    if (n > (size_t)INT32_MAX / 2)
        return rs_fail(err, "segment too long (%zu bytes)", n);
    u->text = rs_calloc(n + 1, 1, err);
    u->start = u->text ? rs_calloc(n / 2 + 2, sizeof *u->start, err) : NULL;
    u->len = u->start ? rs_calloc(n / 2 + 2, sizeof *u->len, err) : NULL;
    if (!u->len) {
        rs_units_free(u);
        return -1;
    }
    const utf8proc_uint8_t *p = (const utf8proc_uint8_t *)s;
    size_t w = 0;
    int in_token = 0;
    u->n = 0;
    for (size_t i = 0; i < n;) {
        utf8proc_int32_t c;
        utf8proc_ssize_t k = utf8proc_iterate(p + i, (utf8proc_ssize_t)(n - i), &c);
        if (py_space(c)) {
            in_token = 0;
        } else {
            if (!in_token) {
                if (u->n > 0)
                    u->text[w++] = ' ';
                u->start[u->n] = (int)w;
                u->len[u->n] = 0;
                u->n++;
                in_token = 1;
            }
            memcpy(u->text + w, s + i, (size_t)k);
            w += (size_t)k;
            u->len[u->n - 1] += (int)k;
        }
        i += (size_t)k;
    }
    u->text[w] = '\0';
    u->start[u->n] = (int)w;
    return 0;
}

/* The code points of s except whitespace (''.join(s.split())). */
static int split_chars(rs_units *u, const char *s, rs_error *err)
{
    size_t n = strlen(s);
    if (n > (size_t)INT32_MAX / 2)
        return rs_fail(err, "segment too long (%zu bytes)", n);
    u->text = rs_calloc(n + 1, 1, err);
    u->start = u->text ? rs_calloc(n + 2, sizeof *u->start, err) : NULL;
    if (!u->start) {
        rs_units_free(u);
        return -1;
    }
    const utf8proc_uint8_t *p = (const utf8proc_uint8_t *)s;
    size_t w = 0;
    u->n = 0;
    for (size_t i = 0; i < n;) {
        utf8proc_int32_t c;
        utf8proc_ssize_t k = utf8proc_iterate(p + i, (utf8proc_ssize_t)(n - i), &c);
        if (!py_space(c)) {
            u->start[u->n++] = (int)w;
            memcpy(u->text + w, s + i, (size_t)k);
            w += (size_t)k;
        }
        i += (size_t)k;
    }
    u->text[w] = '\0';
    u->start[u->n] = (int)w;
    return 0;
}

/* line without U+FEFF, as every text rnnsearch reads is taken (text.h): a
 * byte order mark left inside a line by concatenated files is no part of a
 * word ("\uFEFFcat" counted as another word than "cat"; sacreBLEU, reading
 * with Python's utf-8 codec, keeps it). *copy (the caller frees it) is NULL
 * when line has none. */
static int without_feff(const char **line, char **copy, rs_error *err)
{
    *copy = NULL;
    if (!strstr(*line, "\xEF\xBB\xBF"))
        return 0;
    const size_t n = strlen(*line);
    if (!(*copy = rs_calloc(n + 1, 1, err)))
        return -1;
    memcpy(*copy, *line, n);
    rs_text_drop_feff(*copy, n);
    *line = *copy;
    return 0;
}

/* BLEU's preprocessing: U+FEFF dropped, lower-case, rstrip, tokenize, split. */
int rs_bleu_units(rs_units *u, const char *line, const char *what, const rs_bleu_opts *opts,
                  rs_error *err)
{
    memset(u, 0, sizeof *u);
    if (opts->tokenize != RS_BLEU_TOK_13A && opts->tokenize != RS_BLEU_TOK_NONE &&
        opts->tokenize != RS_BLEU_TOK_INTL && opts->tokenize != RS_BLEU_TOK_CHAR)
        return rs_fail(err, "unknown BLEU tokenizer %d", (int)opts->tokenize);
    if (check_utf8(line, what, err) < 0)
        return -1;
    char *kept;
    if (without_feff(&line, &kept, err))
        return -1;
    char *lowered = NULL;
    if (opts->lowercase) {
        lowered = py_lower(line, err);
        if (!lowered) {
            free(kept);
            return -1;
        }
        line = lowered;
    }
    size_t n = rs_bleu_rstrip_len(line);
    int rc;
    if (opts->tokenize == RS_BLEU_TOK_13A) {
        char *tok = tokenize_13a(line, n, err);
        rc = tok ? split_tokens(u, tok, err) : -1;
        free(tok);
    } else if (opts->tokenize == RS_BLEU_TOK_INTL || opts->tokenize == RS_BLEU_TOK_CHAR) {
        char *tok = tokenize_cp(line, n, opts->tokenize == RS_BLEU_TOK_INTL, err);
        rc = tok ? split_tokens(u, tok, err) : -1;
        free(tok);
    } else {
        char *copy = rs_calloc(n + 1, 1, err);
        if (copy)
            memcpy(copy, line, n);
        rc = copy ? split_tokens(u, copy, err) : -1;
        free(copy);
    }
    free(lowered);
    free(kept);
    return rc;
}

/* chrF's preprocessing: lower-case, drop whitespace (and U+FEFF). */
int rs_chrf_units(rs_units *u, const char *line, const char *what, const rs_bleu_opts *opts,
                  rs_error *err)
{
    memset(u, 0, sizeof *u);
    char *kept;
    if (check_utf8(line, what, err) < 0 || without_feff(&line, &kept, err))
        return -1;
    char *lowered = opts->lowercase ? py_lower(line, err) : NULL;
    const int rc = opts->lowercase && !lowered ? -1 : split_chars(u, lowered ? lowered : line, err);
    free(lowered);
    free(kept);
    return rc;
}

/* ---- n-gram counting --------------------------------------------------- */

int rs_span_cmp_key(const rs_span *a, const rs_span *b)
{
    if (a->order != b->order)
        return a->order < b->order ? -1 : 1;
    if (a->len != b->len)
        return a->len < b->len ? -1 : 1;
    return memcmp(a->s, b->s, (size_t)a->len);
}

int rs_span_cmp(const void *pa, const void *pb)
{
    const rs_span *a = pa, *b = pb;
    int c = rs_span_cmp_key(a, b);
    if (c)
        return c;
    return (a->src > b->src) - (a->src < b->src);
}

/* Appends the n-grams of orders 1..max_order of u; `tokens` says whether the
 * units are tokens (an n-gram then spans n tokens and the spaces between). */
size_t rs_spans_add(rs_span *out, const rs_units *u, int max_order, int tokens, int src)
{
    size_t m = 0;
    for (int order = 1; order <= max_order; order++)
        for (int i = 0; i + order <= u->n; i++) {
            int end =
                tokens ? u->start[i + order - 1] + u->len[i + order - 1] : u->start[i + order];
            out[m].s = u->text + u->start[i];
            out[m].len = end - u->start[i];
            out[m].order = order;
            out[m].src = src;
            m++;
        }
    return m;
}

size_t rs_spans_count(const rs_units *u, int max_order)
{
    size_t m = 0;
    for (int order = 1; order <= max_order; order++)
        if (u->n >= order)
            m += (size_t)(u->n - order + 1);
    return m;
}

/* ---- what BLEU and chrF share ------------------------------------------ */

static const rs_bleu_opts default_opts = {0, RS_BLEU_TOK_13A};

const rs_bleu_opts *rs_bleu_opts_or_default(const rs_bleu_opts *opts)
{
    return opts ? opts : &default_opts;
}

const rs_bleu_opts *rs_segment_begin(const void *stats, const char *hyp, const char *const *refs,
                                     int nrefs, const rs_bleu_opts *opts, rs_error *err)
{
    if (!stats || !hyp || !refs || nrefs < 1)
        return rs_fail(err, "a segment needs a hypothesis and at least one reference"), NULL;
    for (int r = 0; r < nrefs; r++)
        if (!refs[r])
            return rs_fail(err, "reference %d is missing (NULL)", r + 1), NULL;
    for (int r = 0; r < nrefs; r++)
        if (refs[r][0])
            return rs_bleu_opts_or_default(opts);
    return rs_fail(err, "every reference of the segment is empty (sacreBLEU refuses that too)"),
           NULL;
}

const char *rs_segment_ref_name(char name[32], int i)
{
    snprintf(name, 32, "reference %d", i + 1);
    return name;
}

const char *rs_nrefs_text(int nrefs, char buf[16])
{
    if (nrefs == RS_NREFS_VAR)
        return "var";
    snprintf(buf, 16, "%d", nrefs);
    return buf;
}

int rs_word_count(const char *s, int *words, rs_error *err)
{
    if (check_utf8(s, "the source", err) < 0)
        return -1;
    const utf8proc_uint8_t *p = (const utf8proc_uint8_t *)s;
    utf8proc_ssize_t n = (utf8proc_ssize_t)strlen(s);
    int in_word = 0;
    *words = 0;
    for (utf8proc_ssize_t i = 0; i < n;) {
        utf8proc_int32_t c;
        i += utf8proc_iterate(p + i, n - i, &c);
        if (py_space(c))
            in_word = 0;
        else if (!in_word) {
            in_word = 1;
            ++*words;
        }
    }
    return 0;
}
