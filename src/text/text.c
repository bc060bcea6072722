#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <utf8proc.h>

#include "text/text.h"

#define JOINER_LEN 3 /* bytes of RS_JOINER and of RS_SPACE */
#define CP_JOINER 0xFFED
#define CP_SPACE_MARK 0x2581

/* How the word tokenizer sees a code point. */
enum { CLASS_SPACE, CLASS_PUNCT, CLASS_WORD };

/* Unicode White_Space: Zs, Zl, Zp and the C0/C1 controls that act as space. */
static int is_space(utf8proc_int32_t cp)
{
    if ((cp >= 0x09 && cp <= 0x0D) || cp == 0x85)
        return 1;
    utf8proc_category_t c = utf8proc_category(cp);
    return c == UTF8PROC_CATEGORY_ZS || c == UTF8PROC_CATEGORY_ZL || c == UTF8PROC_CATEGORY_ZP;
}

static int char_class(utf8proc_int32_t cp)
{
    if (is_space(cp))
        return CLASS_SPACE;
    utf8proc_category_t c = utf8proc_category(cp);
    if (c >= UTF8PROC_CATEGORY_PC && c <= UTF8PROC_CATEGORY_SO)
        return CLASS_PUNCT;
    return CLASS_WORD;
}

/* Decodes the code point at s[pos..len); its length in bytes, or -1 with err
 * filled when the bytes there are not UTF-8. */
static utf8proc_ssize_t decode(const char *s, size_t pos, size_t len, utf8proc_int32_t *cp,
                               rs_error *err)
{
    utf8proc_ssize_t k =
        utf8proc_iterate((const utf8proc_uint8_t *)s + pos, (utf8proc_ssize_t)(len - pos), cp);
    if (k <= 0)
        return rs_fail(err, "invalid UTF-8 at byte %zu", pos + 1);
    return k;
}

int rs_utf8_validate(const char *s, size_t len, rs_error *err)
{
    if (len > (size_t)PTRDIFF_MAX)
        return rs_fail(err, "text of %zu bytes is too long", len);
    for (size_t pos = 0; pos < len;) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t k = decode(s, pos, len, &cp, err);
        if (k < 0)
            return -1;
        if (cp == 0)
            return rs_fail(err, "NUL byte at byte %zu", pos + 1);
        pos += (size_t)k;
    }
    return 0;
}

void rs_tokens_clear(rs_tokens *tokens)
{
    for (int i = 0; i < tokens->count; i++)
        free(tokens->tokens[i]);
    tokens->count = 0;
}

void rs_tokens_free(rs_tokens *tokens)
{
    rs_tokens_clear(tokens);
    free(tokens->tokens);
    memset(tokens, 0, sizeof *tokens);
}

int rs_tokens_push(rs_tokens *tokens, const char *token, size_t len, rs_error *err)
{
    if (tokens->count == tokens->capacity) {
        if (tokens->capacity > INT_MAX / 2)
            return rs_fail(err, "too many tokens");
        int capacity = tokens->capacity ? 2 * tokens->capacity : 32;
        char **grown = realloc(tokens->tokens, (size_t)capacity * sizeof *grown);
        if (!grown)
            return rs_fail(err, "out of memory growing a token list");
        tokens->tokens = grown;
        tokens->capacity = capacity;
    }
    char *copy = malloc(len + 1);
    if (!copy)
        return rs_fail(err, "out of memory copying a token");
    memcpy(copy, token, len);
    copy[len] = '\0';
    tokens->tokens[tokens->count++] = copy;
    return 0;
}

int rs_text_is_blank(const char *s, size_t len)
{
    rs_error ignored;
    for (size_t pos = 0; pos < len;) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t k = decode(s, pos, len, &cp, &ignored);
        if (k < 0 || !(is_space(cp) || cp == 0xFEFF)) /* U+FEFF: dropped in normalising */
            return 0;
        pos += (size_t)k;
    }
    return 1;
}

int rs_tokenizer_mode_parse(const char *name)
{
    if (!strcmp(name, "word"))
        return RS_TOK_WORD;
    if (!strcmp(name, "char"))
        return RS_TOK_CHAR;
    if (!strcmp(name, "space"))
        return RS_TOK_SPACE;
    return -1;
}

static utf8proc_int32_t lower_cp(utf8proc_int32_t cp, void *data)
{
    (void)data;
    return utf8proc_tolower(cp);
}

#define BOM_BYTES "\xEF\xBB\xBF"

size_t rs_text_drop_feff(char *s, size_t len)
{
    size_t w = 0;
    for (size_t i = 0; i < len;)
        if (i + 3 <= len && !memcmp(s + i, BOM_BYTES, 3))
            i += 3;
        else
            s[w++] = s[i++];
    if (w < len)
        s[w] = '\0';
    return w;
}

/* in[0..len) without U+FEFF (rs_text_drop_feff): *copy is NULL when there is
 * none, else the caller frees it. Done before normalising, so that what it
 * separated still composes (NFC). */
static int drop_bom_chars(const char **in, size_t *len, char **copy, rs_error *err)
{
    *copy = NULL;
    const char *p = *in, *end = *in + *len;
    while ((p = memchr(p, '\xEF', (size_t)(end - p))) && (end - p < 3 || memcmp(p, BOM_BYTES, 3)))
        p++;
    if (!p)
        return 0;
    char *kept = malloc(*len + 1);
    if (!kept)
        return rs_fail(err, "out of memory");
    memcpy(kept, *in, *len);
    *len = rs_text_drop_feff(kept, *len);
    *in = kept;
    *copy = kept;
    return 0;
}

int rs_text_normalize(const char *in, size_t len, int lowercase, char **out, rs_error *err)
{
    *out = NULL;
    if (rs_utf8_validate(in, len, err))
        return -1;
    char *copy;
    if (drop_bom_chars(&in, &len, &copy, err))
        return -1;
    /* utf8proc applies the custom function before decomposing, so the
     * lower-cased text is composed again and the result is NFC. */
    utf8proc_uint8_t *text = NULL;
    utf8proc_ssize_t n =
        utf8proc_map_custom((const utf8proc_uint8_t *)in, (utf8proc_ssize_t)len, &text,
                            UTF8PROC_STABLE | UTF8PROC_COMPOSE, lowercase ? lower_cp : NULL, NULL);
    free(copy);
    if (n < 0)
        return rs_fail(err, "cannot normalise text: %s", utf8proc_errmsg(n));
    /* Collapse white space in place; the text only shrinks. Replacing or
     * dropping spaces cannot undo NFC: no white space composes with anything. */
    size_t w = 0;
    int gap = 0;
    for (size_t pos = 0; pos < (size_t)n;) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t k = decode((const char *)text, pos, (size_t)n, &cp, err);
        if (k < 0) {
            free(text);
            return -1;
        }
        if (is_space(cp)) {
            gap = w > 0;
        } else {
            if (gap)
                text[w++] = ' ';
            gap = 0;
            memmove(text + w, text + pos, (size_t)k);
            w += (size_t)k;
        }
        pos += (size_t)k;
    }
    text[w] = '\0';
    *out = (char *)text;
    return 0;
}

/* One punctuation or symbol token: the code point s[0..k) with the joiner on
 * each glued side; a literal joiner is escaped as "<￭>". */
static int push_punct(rs_tokens *out, const char *s, size_t k, utf8proc_int32_t cp, int glued_left,
                      int glued_right, rs_error *err)
{
    char buf[2 * JOINER_LEN + 8];
    size_t n = 0;
    if (glued_left) {
        memcpy(buf + n, RS_JOINER, JOINER_LEN);
        n += JOINER_LEN;
    }
    if (cp == CP_JOINER) {
        memcpy(buf + n, "<" RS_JOINER ">", JOINER_LEN + 2);
        n += JOINER_LEN + 2;
    } else {
        memcpy(buf + n, s, k);
        n += k;
    }
    if (glued_right) {
        memcpy(buf + n, RS_JOINER, JOINER_LEN);
        n += JOINER_LEN;
    }
    return rs_tokens_push(out, buf, n, err);
}

static int tokenize_words(const char *s, size_t len, rs_tokens *out, rs_error *err)
{
    int glued = 0; /* the previous code point belongs to this space-free chunk */
    size_t pos = 0;
    while (pos < len) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t k = decode(s, pos, len, &cp, err);
        if (k < 0)
            return -1;
        int cls = char_class(cp);
        if (cls == CLASS_SPACE) {
            glued = 0;
            pos += (size_t)k;
        } else if (cls == CLASS_PUNCT) {
            int glued_right = 0;
            if (pos + (size_t)k < len) {
                utf8proc_int32_t next;
                if (decode(s, pos + (size_t)k, len, &next, err) < 0)
                    return -1;
                glued_right = char_class(next) != CLASS_SPACE;
            }
            if (push_punct(out, s + pos, (size_t)k, cp, glued, glued_right, err))
                return -1;
            glued = 1;
            pos += (size_t)k;
        } else {
            size_t start = pos;
            while (pos < len) {
                k = decode(s, pos, len, &cp, err);
                if (k < 0)
                    return -1;
                if (char_class(cp) != CLASS_WORD)
                    break;
                pos += (size_t)k;
            }
            if (rs_tokens_push(out, s + start, pos - start, err))
                return -1;
            glued = 1;
        }
    }
    return 0;
}

static int tokenize_chars(const char *s, size_t len, rs_tokens *out, rs_error *err)
{
    for (size_t pos = 0; pos < len;) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t k = decode(s, pos, len, &cp, err);
        if (k < 0)
            return -1;
        int rc;
        if (is_space(cp))
            rc = rs_tokens_push(out, RS_SPACE, JOINER_LEN, err);
        else if (cp == CP_SPACE_MARK)
            rc = rs_tokens_push(out, "<" RS_SPACE ">", JOINER_LEN + 2, err);
        else
            rc = rs_tokens_push(out, s + pos, (size_t)k, err);
        if (rc)
            return -1;
        pos += (size_t)k;
    }
    return 0;
}

/* The space tokenizer: maximal runs of non-space code points. */
static int tokenize_spaces(const char *s, size_t len, rs_tokens *out, rs_error *err)
{
    size_t start = 0;
    int in_token = 0;
    for (size_t pos = 0; pos <= len;) {
        utf8proc_int32_t cp = ' ';
        utf8proc_ssize_t k = 1;
        if (pos < len && (k = decode(s, pos, len, &cp, err)) < 0)
            return -1;
        if (is_space(cp)) {
            if (in_token && rs_tokens_push(out, s + start, pos - start, err))
                return -1;
            in_token = 0;
        } else if (!in_token) {
            start = pos;
            in_token = 1;
        }
        pos += (size_t)k;
    }
    return 0;
}

int rs_tokenize(const char *normalized, int mode, rs_tokens *out, rs_error *err)
{
    rs_tokens_clear(out);
    size_t len = strlen(normalized);
    int rc;
    if (mode == RS_TOK_WORD)
        rc = tokenize_words(normalized, len, out, err);
    else if (mode == RS_TOK_CHAR)
        rc = tokenize_chars(normalized, len, out, err);
    else if (mode == RS_TOK_SPACE)
        rc = tokenize_spaces(normalized, len, out, err);
    else
        rc = rs_fail(err, "unknown tokenizer mode %d", mode);
    if (rc)
        rs_tokens_clear(out);
    return rc;
}

static int starts_with_joiner(const char *s, size_t len)
{
    return len >= JOINER_LEN && !memcmp(s, RS_JOINER, JOINER_LEN);
}

int rs_detokenize_array(const char *const *tokens, int count, int mode, char **out, rs_error *err)
{
    *out = NULL;
    if (mode != RS_TOK_WORD && mode != RS_TOK_CHAR && mode != RS_TOK_SPACE)
        return rs_fail(err, "unknown tokenizer mode %d", mode);
    if (count < 0)
        return rs_fail(err, "negative token count %d", count);
    /* Output never exceeds the tokens plus one separator each. */
    size_t size = 1;
    for (int i = 0; i < count; i++)
        size += strlen(tokens[i]) + 1;
    char *text = malloc(size);
    if (!text)
        return rs_fail(err, "out of memory detokenizing %d tokens", count);
    size_t n = 0;
    int glue_next = 1; /* no space before the first token */
    for (int i = 0; i < count; i++) {
        const char *t = tokens[i];
        size_t len = strlen(t);
        if (!len)
            continue;
        if (mode == RS_TOK_SPACE) {
            if (n)
                text[n++] = ' ';
            memcpy(text + n, t, len);
            n += len;
            continue;
        }
        if (mode == RS_TOK_CHAR) {
            if (!strcmp(t, RS_SPACE)) {
                t = " ";
                len = 1;
            } else if (!strcmp(t, "<" RS_SPACE ">")) {
                t = RS_SPACE;
                len = JOINER_LEN;
            }
            memcpy(text + n, t, len);
            n += len;
            continue;
        }
        int left = starts_with_joiner(t, len);
        if (left) {
            t += JOINER_LEN;
            len -= JOINER_LEN;
        }
        int right = len >= JOINER_LEN && starts_with_joiner(t + len - JOINER_LEN, JOINER_LEN);
        if (right)
            len -= JOINER_LEN;
        else if (left && !len)
            right = 1; /* a lone joiner glues both sides */
        if (len == JOINER_LEN + 2 && !memcmp(t, "<" RS_JOINER ">", len)) {
            t = RS_JOINER;
            len = JOINER_LEN;
        }
        if (!glue_next && !left)
            text[n++] = ' ';
        memcpy(text + n, t, len);
        n += len;
        glue_next = right;
    }
    text[n] = '\0';
    *out = text;
    return 0;
}

int rs_detokenize(const rs_tokens *tokens, int mode, char **out, rs_error *err)
{
    return rs_detokenize_array((const char *const *)tokens->tokens, tokens->count, mode, out, err);
}

/* The space tokenizer's preparation: UTF-8 checked and, when asked, each
 * code point lower-cased on its own (no flag asks utf8proc to decompose or
 * compose, so the text is not brought to NFC). */
static int prepare_spaced(const char *raw, size_t len, int lowercase, char **out, rs_error *err)
{
    *out = NULL;
    if (rs_utf8_validate(raw, len, err))
        return -1;
    char *copy;
    if (drop_bom_chars(&raw, &len, &copy, err))
        return -1;
    utf8proc_uint8_t *text = NULL;
    utf8proc_ssize_t n = utf8proc_map_custom((const utf8proc_uint8_t *)raw, (utf8proc_ssize_t)len,
                                             &text, 0, lowercase ? lower_cp : NULL, NULL);
    free(copy);
    if (n < 0)
        return rs_fail(err, "cannot lower-case text: %s", utf8proc_errmsg(n));
    *out = (char *)text;
    return 0;
}

int rs_text_to_tokens(const char *raw, size_t len, int lowercase, int mode, rs_tokens *out,
                      rs_error *err)
{
    char *prepared;
    int rc = mode == RS_TOK_SPACE ? prepare_spaced(raw, len, lowercase, &prepared, err)
                                  : rs_text_normalize(raw, len, lowercase, &prepared, err);
    if (rc) {
        rs_tokens_clear(out);
        return -1;
    }
    rc = rs_tokenize(prepared, mode, out, err);
    free(prepared);
    return rc;
}

/* "▁the ▁hou se" → "the house": spaces dropped, U+2581 (E2 96 81) a space,
 * the ends trimmed. The result is never longer than text. */
static int decode_pieces(const char *text, char **out, rs_error *err)
{
    char *joined = malloc(strlen(text) + 1);
    if (!joined)
        return rs_fail(err, "out of memory decoding SentencePiece pieces");
    size_t w = 0;
    for (const char *r = text; *r;) {
        if (!strncmp(r, "\xE2\x96\x81", 3)) {
            if (w > 0) /* a leading one starts the line: trimmed */
                joined[w++] = ' ';
            r += 3;
        } else if (*r == ' ') {
            r++;
        } else {
            joined[w++] = *r++;
        }
    }
    while (w > 0 && joined[w - 1] == ' ')
        w--;
    joined[w] = '\0';
    *out = joined;
    return 0;
}

int rs_remove_bpe(const char *text, const char *marker, char **out, rs_error *err)
{
    *out = NULL;
    if (!strcmp(marker, RS_BPE_SENTENCEPIECE))
        return decode_pieces(text, out, err);
    const size_t m = strlen(marker), len = strlen(text);
    if (!m)
        return rs_fail(err, "the BPE marker is empty");
    char *joined = malloc(len + 2);
    if (!joined)
        return rs_fail(err, "out of memory removing BPE marks");
    memcpy(joined, text, len);
    memcpy(joined + len, " ", 2);
    /* Left to right without overlap, as Python's str.replace. */
    size_t w = 0;
    for (size_t r = 0; joined[r];) {
        if (!strncmp(joined + r, marker, m)) {
            r += m;
        } else {
            joined[w++] = joined[r++];
        }
    }
    while (w > 0 && strchr(" \t\n\r\v\f", joined[w - 1]))
        w--;
    joined[w] = '\0';
    *out = joined;
    return 0;
}

/* "▁the ▁hou se" -> "the house" (RS_POST_SPM). */
static int join_pieces(const char *text, char **out, rs_error *err)
{
    const size_t len = strlen(text), mark = sizeof RS_SPACE - 1;
    char *joined = malloc(len + 1);
    if (!joined)
        return rs_fail(err, "out of memory joining SentencePiece pieces");
    size_t w = 0;
    for (size_t r = 0; r < len;) {
        if (text[r] == ' ') {
            r++;
        } else if (!strncmp(text + r, RS_SPACE, mark)) {
            joined[w++] = ' ';
            r += mark;
        } else {
            joined[w++] = text[r++];
        }
    }
    size_t start = 0;
    while (start < w && joined[start] == ' ')
        start++;
    while (w > start && joined[w - 1] == ' ')
        w--;
    memmove(joined, joined + start, w - start);
    joined[w - start] = '\0';
    *out = joined;
    return 0;
}

int rs_post_process(const char *text, int kind, char **out, rs_error *err)
{
    *out = NULL;
    switch (kind) {
    case RS_POST_NONE: *out = rs_strdup(text, err); return *out ? 0 : -1;
    case RS_POST_BPE: return rs_remove_bpe(text, RS_BPE_MARKER, out, err);
    case RS_POST_SPM: return join_pieces(text, out, err);
    case RS_POST_JOINER: {
        rs_tokens tokens = {0};
        int rc = rs_tokenize(text, RS_TOK_SPACE, &tokens, err) ||
                 rs_detokenize(&tokens, RS_TOK_WORD, out, err);
        rs_tokens_free(&tokens);
        return rc ? -1 : 0;
    }
    default: return rs_fail(err, "unknown post-processing %d", kind);
    }
}
