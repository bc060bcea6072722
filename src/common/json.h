/* A small JSON (RFC 8259) reader and a string writer.
 *
 * The reader builds a tree from a whole text and refuses anything that is not
 * JSON: trailing commas, comments, single quotes, leading zeros, unescaped
 * control characters, invalid UTF-8, lone surrogates, duplicate object keys and
 * trailing data. Strings come out as NUL-terminated UTF-8 with every escape
 * decoded (\uD83D\uDE00 pairs become one 4-byte character); "\u0000" is refused
 * because our strings are C strings. Nesting is limited to RS_JSON_MAX_DEPTH. */
#ifndef RS_JSON_H
#define RS_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/error.h"

#define RS_JSON_MAX_DEPTH 64

typedef enum {
    RS_JSON_NULL,
    RS_JSON_FALSE,
    RS_JSON_TRUE,
    RS_JSON_NUMBER,
    RS_JSON_STRING,
    RS_JSON_ARRAY,
    RS_JSON_OBJECT,
} rs_json_type;

typedef struct rs_json rs_json;
struct rs_json {
    rs_json_type type;
    double number; /* NUMBER */
    int exact;     /* NUMBER: 1 when it is an integer from 0 to 2^64 − 1 (in any
                       form: 7, 7.0, 0.7e1), u64 then its exact value */
    uint64_t u64;
    char *string;   /* STRING: UTF-8, NUL-terminated; owned */
    size_t len;     /* STRING: bytes before the NUL */
    size_t count;   /* ARRAY, OBJECT: number of items */
    rs_json *items; /* ARRAY, OBJECT: [count] values; owned */
    char **keys;    /* OBJECT: [count] keys in file order; owned */
};

/* Parses text[0..len) (need not be NUL-terminated). Returns a tree to free
 * with rs_json_free, or NULL with a message giving the byte offset. */
rs_json *rs_json_parse(const char *text, size_t len, rs_error *err);
void rs_json_free(rs_json *value);

/* The member `key` of an object, or NULL (also when `object` is not an object). */
const rs_json *rs_json_get(const rs_json *object, const char *key);

/* A NUMBER that is an integer from 0 to 2^64 − 1 into *out, exactly (read
 * from its text: an id of 2^53 + 1 stays 2^53 + 1, where the double `number`
 * holds 2^53); -1 otherwise. */
int rs_json_to_u64(const rs_json *value, uint64_t *out);

/* Human name of a type, for messages ("string", "array", ...). */
const char *rs_json_type_name(rs_json_type type);

/* Writes s as a JSON string literal, quotes included: '"' and '\' escaped,
 * \n \r \t \b \f by name, other bytes below 0x20 and 0x7F as \u00XX, all
 * other bytes (UTF-8) as they are. Returns 0, or -1 when the stream has an
 * error. */
int rs_json_write_string(FILE *out, const char *s);

/* Writes s[0..n) as a JSON array of strings, as rs_json_write_string. */
int rs_json_write_strings(FILE *out, const char *const *s, int n);

#endif
