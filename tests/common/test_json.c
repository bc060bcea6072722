/* The JSON reader and string writer (src/common/json.c), beyond the values and
 * malformed texts the safetensors tests parse: object order and lookup, the
 * integer range of rs_json_to_u64, JSON's four whitespace characters only,
 * the nesting limit, error offsets, the separators and brackets of arrays and
 * objects, and every ASCII character and some UTF-8
 * written by rs_json_write_string and read back unchanged. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"

static rs_json *parse(const char *text, rs_error *err)
{
    return rs_json_parse(text, strlen(text), err);
}

START_TEST(objects_keep_file_order)
{
    rs_error err;
    rs_json *v = parse("{\"z\": 1, \"a\": {\"inner\": [true]}, \"m\": \"x\"}", &err);
    ck_assert_msg(v != NULL, "%s", err.msg);
    ck_assert_uint_eq(v->count, 3);
    ck_assert_str_eq(v->keys[0], "z");
    ck_assert_str_eq(v->keys[1], "a");
    ck_assert_str_eq(v->keys[2], "m");
    ck_assert(v->items[0].type == RS_JSON_NUMBER && v->items[0].number == 1.0);
    const rs_json *inner = rs_json_get(rs_json_get(v, "a"), "inner");
    ck_assert(inner && inner->type == RS_JSON_ARRAY && inner->items[0].type == RS_JSON_TRUE);
    ck_assert_ptr_null(rs_json_get(NULL, "a"));
    ck_assert_ptr_null(rs_json_get(v, "Z"));
    rs_json_free(v);
    rs_json_free(NULL);
}
END_TEST

START_TEST(numbers_and_integer_range)
{
    static const struct {
        const char *text;
        double value;
    } numbers[] = {
        {"0", 0.0},         {"-0", -0.0},       {"1e2", 100.0}, {"1E+2", 100.0},
        {"2.5e-3", 0.0025}, {"-12.75", -12.75}, {"0.1", 0.1},   {"123456789", 123456789.0}};
    for (size_t i = 0; i < sizeof numbers / sizeof *numbers; i++) {
        rs_error err;
        rs_json *v = parse(numbers[i].text, &err);
        ck_assert_msg(v && v->type == RS_JSON_NUMBER, "%s refused", numbers[i].text);
        ck_assert_msg(v->number == numbers[i].value, "%s read as %.17g", numbers[i].text,
                      v->number);
        rs_json_free(v);
    }
    /* rs_json_to_u64: integers in [0, 2^64 − 1], exactly, in any form
     * (issue 42: 2^53 + 1 was read as 2^53). */
    static const struct {
        const char *text;
        int ok;
        uint64_t value;
    } ints[] = {{"0", 1, 0},
                {"1e3", 1, 1000},
                {"9007199254740992", 1, 9007199254740992ULL},
                {"9007199254740993", 1, 9007199254740993ULL},
                {"18446744073709551615", 1, 18446744073709551615ULL},
                {"18446744073709551616", 0, 0},
                {"9007199254740993.0", 1, 9007199254740993ULL},
                {"90071992547409930e-1", 1, 9007199254740993ULL},
                {"0.9007199254740993e16", 1, 9007199254740993ULL},
                {"9007199254740993.5", 0, 0},
                {"4503599627370497.5", 0, 0},
                {"1.8446744073709551615e19", 1, 18446744073709551615ULL},
                {"1.8446744073709551616e19", 0, 0},
                {"7.00", 1, 7},
                {"700E-2", 1, 7},
                {"0.0e-7", 1, 0},
                {"5e-1", 0, 0},
                {"1e20", 0, 0},
                {"1e999999", 0, 0},
                {"1.5", 0, 0},
                {"-1", 0, 0},
                {"\"7\"", 0, 0},
                {"null", 0, 0}};
    for (size_t i = 0; i < sizeof ints / sizeof *ints; i++) {
        rs_error err;
        rs_json *v = parse(ints[i].text, &err);
        ck_assert(v != NULL);
        uint64_t u = 12345;
        int status = rs_json_to_u64(v, &u);
        ck_assert_msg(status == (ints[i].ok ? 0 : -1), "%s: status %d", ints[i].text, status);
        if (ints[i].ok)
            ck_assert(u == ints[i].value);
        rs_json_free(v);
    }
}
END_TEST

START_TEST(whitespace_depth_and_error_offsets)
{
    rs_error err;
    rs_json *v = parse(" \t\r\n[ 1 ,\n\t2 ]\r\n ", &err);
    ck_assert_msg(v && v->count == 2, "JSON whitespace refused");
    rs_json_free(v);
    /* Vertical tab, form feed and no-break space are not JSON whitespace. */
    static const char *const bad[] = {"\v1", "[1,\f2]",
                                      "\xC2\xA0"
                                      "1"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        ck_assert_msg(parse(bad[i], &err) == NULL, "accepted whitespace case %zu", i);
    /* Values nest at most RS_JSON_MAX_DEPTH levels below the top one: that
     * many arrays inside an array are read, one more is refused. */
    enum { MOST = RS_JSON_MAX_DEPTH + 1 };
    char deep[2 * MOST + 2];
    memset(deep, '[', MOST);
    memset(deep + MOST, ']', MOST);
    v = rs_json_parse(deep, 2 * MOST, &err);
    ck_assert_msg(v != NULL, "%d nested arrays refused: %s", MOST, err.msg);
    rs_json_free(v);
    memset(deep, '[', MOST + 1);
    memset(deep + MOST + 1, ']', MOST + 1);
    ck_assert_ptr_null(rs_json_parse(deep, 2 * MOST + 2, &err));
    /* The message gives the byte offset of the fault. */
    ck_assert_ptr_null(parse("[1, 2, x]", &err));
    ck_assert_msg(strstr(err.msg, "at byte 7") != NULL, "no offset 7 in: %s", err.msg);
    /* Type names for messages. */
    ck_assert_str_eq(rs_json_type_name(RS_JSON_STRING), "string");
    ck_assert_str_eq(rs_json_type_name(RS_JSON_OBJECT), "object");
    ck_assert_str_eq(rs_json_type_name(RS_JSON_NULL), "null");
}
END_TEST

START_TEST(containers_and_separators)
{
    rs_error err;
    /* Empty containers, with and without space inside. */
    static const char *const empty[] = {"[]", "[ \n]", "{}", "{\t}"};
    for (size_t i = 0; i < sizeof empty / sizeof *empty; i++) {
        rs_json *v = parse(empty[i], &err);
        ck_assert_msg(v != NULL && v->count == 0, "%s: %s", empty[i], v ? "" : err.msg);
        rs_json_free(v);
    }
    rs_json *v = parse("[[], {}, [1 , {\"a\" : [2]}]]", &err);
    ck_assert_msg(v && v->count == 3 && v->items[2].count == 2, "nested containers: %s", err.msg);
    rs_json_free(v);
    /* What is refused, with the message and the offset of the fault. */
    const struct {
        const char *text, *msg;
    } bad[] = {
        {"[1 2]", "expected ',' or ']' in array at byte 3"},
        {"[1,", "unexpected end of input at byte 3"},
        {"[1,]", "unexpected character at byte 3"},
        {"[1", "expected ',' or ']' in array at byte 2"},
        {"[1}", "expected ',' or ']' in array at byte 2"},
        {"{\"a\": 1 \"b\": 2}", "expected ',' or '}' in object at byte 8"},
        {"{\"a\": 1,}", "expected a string key in object at byte 8"},
        {"{\"a\": 1]", "expected ',' or '}' in object at byte 7"},
        {"{\"a\" 1}", "expected ':' after object key at byte 5"},
        {"{\"a\": 1, \"a\": 2}", "duplicate key in object at byte 9"},
        {"{", "expected a string key in object at byte 1"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ck_assert_msg(parse(bad[i].text, &err) == NULL, "accepted %s", bad[i].text);
        ck_assert_msg(strstr(err.msg, bad[i].msg) != NULL, "%s: %s", bad[i].text, err.msg);
    }
}
END_TEST

START_TEST(written_strings_read_back)
{
    /* Every ASCII character but NUL, then multi-byte UTF-8. */
    char s[200];
    size_t k = 0;
    for (int c = 1; c < 128; c++)
        s[k++] = (char)c;
    const char *utf8 = "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\xEF\xBF\xAD";
    strcpy(s + k, utf8);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(rs_json_write_string(f, s), 0);
    ck_assert_int_eq(rs_json_write_string(f, ""), 0);
    fclose(f);
    /* Two literals side by side: parse the first, then the empty one. */
    ck_assert(len >= 2 && memcmp(text + len - 2, "\"\"", 2) == 0);
    rs_error err;
    rs_json *v = rs_json_parse(text, len - 2, &err);
    ck_assert_msg(v != NULL, "written string refused: %s", err.msg);
    ck_assert_int_eq(v->type, RS_JSON_STRING);
    ck_assert_str_eq(v->string, s);
    ck_assert_uint_eq(v->len, strlen(s));
    rs_json_free(v);
    /* No raw control character is left in the literal. */
    for (size_t i = 0; i < len; i++)
        ck_assert_msg((unsigned char)text[i] >= 0x20 && text[i] != 0x7F, "raw byte 0x%02x at %zu",
                      (unsigned char)text[i], i);
    free(text);
}
END_TEST

Suite *json_suite(void)
{
    Suite *s = suite_create("json");
    TCase *tc = tcase_create("reader and writer");
    tcase_add_test(tc, objects_keep_file_order);
    tcase_add_test(tc, numbers_and_integer_range);
    tcase_add_test(tc, whitespace_depth_and_error_offsets);
    tcase_add_test(tc, containers_and_separators);
    tcase_add_test(tc, written_strings_read_back);
    suite_add_tcase(s, tc);
    return s;
}
