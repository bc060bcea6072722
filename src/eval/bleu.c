/* Corpus BLEU and chrF as sacreBLEU 2.x computes them (see bleu.h).
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
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <utf8proc.h>

#include "eval/bleu.h"

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

/* ---- segments as tokens or characters ---------------------------------- */

typedef struct {
    char *text; /* tokens joined by single spaces, or characters without whitespace */
    int n;      /* tokens or code points */
    int *start; /* [n + 1] byte offsets; for tokens, start[i] + len[i] ends token i */
    int *len;   /* [n] token byte lengths (tokens only) */
} unit_line;

static void unit_line_free(unit_line *u)
{
    free(u->text);
    free(u->start);
    free(u->len);
    memset(u, 0, sizeof *u);
}

/* str.split() of s, rejoined with single spaces. */
static int split_tokens(unit_line *u, const char *s, rs_error *err)
{
    size_t n = strlen(s);
    if (n > (size_t)INT32_MAX / 2)
        return rs_fail(err, "segment too long (%zu bytes)", n);
    u->text = rs_calloc(n + 1, 1, err);
    u->start = u->text ? rs_calloc(n / 2 + 2, sizeof *u->start, err) : NULL;
    u->len = u->start ? rs_calloc(n / 2 + 2, sizeof *u->len, err) : NULL;
    if (!u->len) {
        unit_line_free(u);
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
static int split_chars(unit_line *u, const char *s, rs_error *err)
{
    size_t n = strlen(s);
    if (n > (size_t)INT32_MAX / 2)
        return rs_fail(err, "segment too long (%zu bytes)", n);
    u->text = rs_calloc(n + 1, 1, err);
    u->start = u->text ? rs_calloc(n + 2, sizeof *u->start, err) : NULL;
    if (!u->start) {
        unit_line_free(u);
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

/* BLEU's preprocessing: lower-case, rstrip, tokenize, split. */
static int bleu_units(unit_line *u, const char *line, const char *what, const rs_bleu_opts *opts,
                      rs_error *err)
{
    memset(u, 0, sizeof *u);
    if (opts->tokenize != RS_BLEU_TOK_13A && opts->tokenize != RS_BLEU_TOK_NONE)
        return rs_fail(err, "unknown BLEU tokenizer %d", (int)opts->tokenize);
    if (check_utf8(line, what, err) < 0)
        return -1;
    char *lowered = NULL;
    if (opts->lowercase) {
        lowered = py_lower(line, err);
        if (!lowered)
            return -1;
        line = lowered;
    }
    size_t n = rs_bleu_rstrip_len(line);
    int rc;
    if (opts->tokenize == RS_BLEU_TOK_13A) {
        char *tok = tokenize_13a(line, n, err);
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
    return rc;
}

/* chrF's preprocessing: lower-case, drop whitespace. */
static int chrf_units(unit_line *u, const char *line, const char *what, const rs_bleu_opts *opts,
                      rs_error *err)
{
    memset(u, 0, sizeof *u);
    if (check_utf8(line, what, err) < 0)
        return -1;
    if (!opts->lowercase)
        return split_chars(u, line, err);
    char *lowered = py_lower(line, err);
    if (!lowered)
        return -1;
    int rc = split_chars(u, lowered, err);
    free(lowered);
    return rc;
}

/* ---- n-gram counting --------------------------------------------------- */

typedef struct {
    const char *s;
    int len;
    int order; /* 1-based */
    int src;   /* 0 hypothesis, 1.. references */
} span;

static int span_cmp_key(const span *a, const span *b)
{
    if (a->order != b->order)
        return a->order < b->order ? -1 : 1;
    if (a->len != b->len)
        return a->len < b->len ? -1 : 1;
    return memcmp(a->s, b->s, (size_t)a->len);
}

static int span_cmp(const void *pa, const void *pb)
{
    const span *a = pa, *b = pb;
    int c = span_cmp_key(a, b);
    if (c)
        return c;
    return (a->src > b->src) - (a->src < b->src);
}

/* Appends the n-grams of orders 1..max_order of u; `tokens` says whether the
 * units are tokens (an n-gram then spans n tokens and the spaces between). */
static size_t add_spans(span *out, const unit_line *u, int max_order, int tokens, int src)
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

static size_t count_spans(const unit_line *u, int max_order)
{
    size_t m = 0;
    for (int order = 1; order <= max_order; order++)
        if (u->n >= order)
            m += (size_t)(u->n - order + 1);
    return m;
}

/* ---- BLEU -------------------------------------------------------------- */

static const rs_bleu_opts default_opts = {0, RS_BLEU_TOK_13A};

static const char *ref_name(char name[32], int i)
{
    snprintf(name, 32, "reference %d", i + 1);
    return name;
}

void rs_bleu_stats_init(rs_bleu_stats *stats)
{
    memset(stats, 0, sizeof *stats);
}

static int check_args(const void *stats, const char *hyp, const char *const *refs, int nrefs,
                      rs_error *err)
{
    if (!stats || !hyp || !refs || nrefs < 1)
        return rs_fail(err, "a segment needs a hypothesis and at least one reference");
    for (int r = 0; r < nrefs; r++)
        if (!refs[r])
            return rs_fail(err, "reference %d is missing (NULL)", r + 1);
    for (int r = 0; r < nrefs; r++)
        if (refs[r][0])
            return 0;
    return rs_fail(err, "every reference of the segment is empty (sacreBLEU refuses that too)");
}

int rs_bleu_stats_add(rs_bleu_stats *stats, const char *hyp, const char *const *refs, int nrefs,
                      const rs_bleu_opts *opts, rs_error *err)
{
    if (check_args(stats, hyp, refs, nrefs, err) < 0)
        return -1;
    if (!opts)
        opts = &default_opts;
    int rc = -1;
    char name[32];
    span *spans = NULL;
    unit_line h;
    unit_line *r = rs_calloc((size_t)nrefs, sizeof *r, err);
    if (!r)
        return -1;
    if (bleu_units(&h, hyp, "the hypothesis", opts, err) < 0)
        goto done;
    size_t nspans = count_spans(&h, RS_BLEU_ORDER);
    /* closest reference length; on a tie the shorter one */
    long long closest = -1, closest_diff = -1;
    for (int i = 0; i < nrefs; i++) {
        if (!refs[i][0])
            continue;
        if (bleu_units(&r[i], refs[i], ref_name(name, i), opts, err) < 0)
            goto done;
        nspans += count_spans(&r[i], RS_BLEU_ORDER);
        long long len = r[i].n, diff = llabs((long long)h.n - len);
        if (closest_diff < 0 || diff < closest_diff || (diff == closest_diff && len < closest)) {
            closest_diff = diff;
            closest = len;
        }
    }
    spans = rs_calloc(nspans, sizeof *spans, err);
    if (!spans)
        goto done;
    size_t m = add_spans(spans, &h, RS_BLEU_ORDER, 1, 0);
    for (int i = 0; i < nrefs; i++)
        if (refs[i][0])
            m += add_spans(spans + m, &r[i], RS_BLEU_ORDER, 1, i + 1);
    qsort(spans, m, sizeof *spans, span_cmp);
    /* Per distinct n-gram: its hypothesis count h, clipped by the largest
     * count m in any one reference (spans of one source are adjacent). */
    long long correct[RS_BLEU_ORDER] = {0};
    for (size_t g = 0; g < m;) {
        size_t e = g;
        long long hc = 0, best = 0, run = 0;
        int run_src = -1;
        for (; e < m && span_cmp_key(&spans[g], &spans[e]) == 0; e++) {
            if (spans[e].src == 0) {
                hc++;
                continue;
            }
            run = spans[e].src == run_src ? run + 1 : 1;
            run_src = spans[e].src;
            if (run > best)
                best = run;
        }
        correct[spans[g].order - 1] += hc < best ? hc : best;
        g = e;
    }
    for (int n = 0; n < RS_BLEU_ORDER; n++) {
        stats->correct[n] += correct[n];
        if (h.n > n)
            stats->total[n] += h.n - n;
    }
    stats->hyp_len += h.n;
    stats->ref_len += closest;
    stats->segments++;
    rc = 0;
done:
    free(spans);
    unit_line_free(&h);
    for (int i = 0; i < nrefs; i++)
        unit_line_free(&r[i]);
    free(r);
    return rc;
}

/* sacreBLEU's BLEU.compute_bleu with smooth_method "exp" and no effective
 * order, operation for operation, so the double results agree bit for bit. */
void rs_bleu_compute(const rs_bleu_stats *stats, rs_bleu_result *res)
{
    rs_bleu_compute_order(stats, 0, res);
}

void rs_bleu_compute_order(const rs_bleu_stats *stats, int effective_order, rs_bleu_result *res)
{
    memset(res, 0, sizeof *res);
    long long sys_len = stats->hyp_len, ref_len = stats->ref_len;
    res->hyp_len = sys_len;
    res->ref_len = ref_len;
    res->ratio = ref_len ? (double)sys_len / (double)ref_len : 0.0;
    memcpy(res->correct, stats->correct, sizeof res->correct);
    memcpy(res->total, stats->total, sizeof res->total);
    if (sys_len < ref_len)
        res->bp = sys_len > 0 ? exp(1.0 - (double)ref_len / (double)sys_len) : 0.0;
    else
        res->bp = 1.0;

    int any = 0;
    for (int n = 0; n < RS_BLEU_ORDER; n++)
        any |= stats->correct[n] != 0;
    if (!any)
        return; /* score 0 and precisions 0, as sacreBLEU's early exit */

    /* exp smoothing (mteval-v13a): the k-th order without matches counts as
     * 1 / 2^k matches */
    double smooth = 1.0;
    int orders = RS_BLEU_ORDER; /* averaged over: all, or with effective order those with n-grams */
    for (int n = 0; n < RS_BLEU_ORDER; n++) {
        if (stats->total[n] == 0)
            break; /* the rest stay 0 and force the score to 0 (unless effective order) */
        if (effective_order)
            orders = n + 1;
        if (stats->correct[n] == 0) {
            smooth *= 2;
            res->precisions[n] = 100.0 / (smooth * (double)stats->total[n]);
        } else {
            res->precisions[n] = 100.0 * (double)stats->correct[n] / (double)stats->total[n];
        }
    }
    double sum = 0.0;
    for (int n = 0; n < orders; n++)
        sum += res->precisions[n] == 0.0 ? -9999999999.0 : log(res->precisions[n]);
    res->score = res->bp * exp(sum / orders);
}

int rs_bleu_nonempty_refs(const char *const *refs, int nrefs)
{
    int n = 0;
    for (int r = 0; r < nrefs; r++)
        n += refs[r] && refs[r][0];
    return n;
}

/* "1", "2", … or "var". */
static const char *nrefs_text(int nrefs, char buf[16])
{
    if (nrefs == RS_NREFS_VAR)
        return "var";
    snprintf(buf, 16, "%d", nrefs);
    return buf;
}

int rs_bleu_signature(const rs_bleu_opts *opts, int nrefs, int effective_order, const char *version,
                      char *buf, size_t size)
{
    if (!opts)
        opts = &default_opts;
    char n[16];
    return snprintf(buf, size, "nrefs:%s|case:%s|eff:%s|tok:%s|smooth:exp|version:%s",
                    nrefs_text(nrefs, n), opts->lowercase ? "lc" : "mixed",
                    effective_order ? "yes" : "no",
                    opts->tokenize == RS_BLEU_TOK_13A ? "13a" : "none", version);
}

int rs_bleu_format(const rs_bleu_result *r, char *buf, size_t size)
{
    return snprintf(buf, size,
                    "BLEU = %.2f %.1f/%.1f/%.1f/%.1f (BP = %.3f ratio = %.3f hyp_len = %lld "
                    "ref_len = %lld)",
                    r->score, r->precisions[0], r->precisions[1], r->precisions[2],
                    r->precisions[3], r->bp, r->ratio, r->hyp_len, r->ref_len);
}

int rs_bleu_tokenize_line(const char *line, const rs_bleu_opts *opts, char **out, rs_error *err)
{
    unit_line u;
    *out = NULL;
    if (!line)
        return rs_fail(err, "no line to tokenize");
    if (bleu_units(&u, line, "the line", opts ? opts : &default_opts, err) < 0)
        return -1;
    *out = u.text;
    u.text = NULL;
    unit_line_free(&u);
    return 0;
}

/* ---- chrF -------------------------------------------------------------- */

int rs_chrf_signature(const rs_bleu_opts *opts, int nrefs, const char *version, char *buf,
                      size_t size)
{
    if (!opts)
        opts = &default_opts;
    char n[16];
    return snprintf(buf, size, "nrefs:%s|case:%s|eff:yes|nc:%d|nw:0|space:no|version:%s",
                    nrefs_text(nrefs, n), opts->lowercase ? "lc" : "mixed", RS_CHRF_ORDER, version);
}

void rs_chrf_stats_init(rs_chrf_stats *stats)
{
    memset(stats, 0, sizeof *stats);
}

/* sacreBLEU's CHRF._compute_f_score without eps smoothing: average precision
 * and recall over the orders where both sides have n-grams, then F-beta. */
static double chrf_f(const long long *hyp, const long long *ref, const long long *match,
                     rs_chrf_result *res)
{
    const double factor = (double)RS_CHRF_BETA * RS_CHRF_BETA;
    double avg_prec = 0.0, avg_rec = 0.0;
    int effective = 0;
    for (int i = 0; i < RS_CHRF_ORDER; i++)
        if (hyp[i] > 0 && ref[i] > 0) {
            avg_prec += (double)match[i] / (double)hyp[i];
            avg_rec += (double)match[i] / (double)ref[i];
            effective++;
        }
    if (effective == 0) {
        avg_prec = avg_rec = 0.0;
    } else {
        avg_prec /= effective;
        avg_rec /= effective;
    }
    double score = 0.0;
    if (avg_prec + avg_rec != 0.0) {
        score = (1 + factor) * avg_prec * avg_rec;
        score /= factor * avg_prec + avg_rec;
        score *= 100;
    }
    if (res) {
        res->score = score;
        res->precision = avg_prec;
        res->recall = avg_rec;
        res->effective_order = effective;
    }
    return score;
}

int rs_chrf_stats_add(rs_chrf_stats *stats, const char *hyp, const char *const *refs, int nrefs,
                      const rs_bleu_opts *opts, rs_error *err)
{
    if (check_args(stats, hyp, refs, nrefs, err) < 0)
        return -1;
    if (!opts)
        opts = &default_opts;
    int rc = -1;
    char name[32];
    span *spans = NULL;
    unit_line h, r;
    memset(&r, 0, sizeof r);
    if (chrf_units(&h, hyp, "the hypothesis", opts, err) < 0)
        return -1;
    long long best_hyp[RS_CHRF_ORDER] = {0}, best_ref[RS_CHRF_ORDER] = {0},
              best_match[RS_CHRF_ORDER] = {0};
    double best_f = -1.0;
    size_t hyp_spans = count_spans(&h, RS_CHRF_ORDER);
    for (int i = 0; i < nrefs; i++) {
        if (!refs[i][0])
            continue;
        if (chrf_units(&r, refs[i], ref_name(name, i), opts, err) < 0)
            goto done;
        size_t nspans = hyp_spans + count_spans(&r, RS_CHRF_ORDER);
        span *grown = realloc(spans, (nspans ? nspans : 1) * sizeof *spans);
        if (!grown) {
            rs_fail(err, "out of memory counting character n-grams");
            goto done;
        }
        spans = grown;
        size_t m = add_spans(spans, &h, RS_CHRF_ORDER, 0, 0);
        m += add_spans(spans + m, &r, RS_CHRF_ORDER, 0, 1);
        qsort(spans, m, sizeof *spans, span_cmp);
        long long hc[RS_CHRF_ORDER] = {0}, rc_[RS_CHRF_ORDER] = {0}, mc[RS_CHRF_ORDER] = {0};
        for (size_t g = 0; g < m;) {
            size_t e = g;
            long long nh = 0, nr = 0;
            for (; e < m && span_cmp_key(&spans[g], &spans[e]) == 0; e++)
                *(spans[e].src ? &nr : &nh) += 1;
            mc[spans[g].order - 1] += nh < nr ? nh : nr;
            g = e;
        }
        for (int n = 0; n < RS_CHRF_ORDER; n++) {
            rc_[n] = r.n > n ? r.n - n : 0;
            /* sacreBLEU counts no hypothesis n-grams of an order the
             * reference does not have */
            hc[n] = rc_[n] > 0 && h.n > n ? h.n - n : 0;
        }
        double f = chrf_f(hc, rc_, mc, NULL);
        if (f > best_f) {
            best_f = f;
            memcpy(best_hyp, hc, sizeof hc);
            memcpy(best_ref, rc_, sizeof rc_);
            memcpy(best_match, mc, sizeof mc);
        }
        unit_line_free(&r);
    }
    for (int n = 0; n < RS_CHRF_ORDER; n++) {
        stats->hyp[n] += best_hyp[n];
        stats->ref[n] += best_ref[n];
        stats->match[n] += best_match[n];
    }
    stats->segments++;
    rc = 0;
done:
    free(spans);
    unit_line_free(&h);
    unit_line_free(&r);
    return rc;
}

void rs_chrf_compute(const rs_chrf_stats *stats, rs_chrf_result *result)
{
    chrf_f(stats->hyp, stats->ref, stats->match, result);
}

int rs_chrf_format(const rs_chrf_result *r, char *buf, size_t size)
{
    return snprintf(buf, size, "chrF%d = %.2f", RS_CHRF_BETA, r->score);
}
