/* CRC-32 (src/common/crc32.c) against known answers of the zlib/PNG/gzip checksum,
 * and piecewise updates against the whole. */
#include <check.h>
#include <string.h>

#include "common/crc32.h"

START_TEST(crc32_known_answers)
{
    /* The catalogue's check value, then values zlib's crc32 gives. */
    ck_assert_uint_eq(rs_crc32_update(0, "123456789", 9), 0xCBF43926u);
    ck_assert_uint_eq(rs_crc32_update(0, "", 0), 0x00000000u);
    ck_assert_uint_eq(rs_crc32_update(0, "a", 1), 0xE8B7BE43u);
    const char *fox = "The quick brown fox jumps over the lazy dog";
    ck_assert_uint_eq(rs_crc32_update(0, fox, strlen(fox)), 0x414FA339u);
    unsigned char zeros[32] = {0}, ones[32], all[256];
    memset(ones, 0xFF, sizeof ones);
    for (int i = 0; i < 256; i++)
        all[i] = (unsigned char)i;
    ck_assert_uint_eq(rs_crc32_update(0, zeros, sizeof zeros), 0x190A55ADu);
    ck_assert_uint_eq(rs_crc32_update(0, ones, sizeof ones), 0xFF6CAB0Bu);
    ck_assert_uint_eq(rs_crc32_update(0, all, sizeof all), 0x29058C73u);
}
END_TEST

START_TEST(crc32_in_pieces_equals_whole)
{
    unsigned char all[256];
    for (int i = 0; i < 256; i++)
        all[i] = (unsigned char)(i * 7 + 3);
    const uint32_t whole = rs_crc32_update(0, all, sizeof all);
    /* Every split point, and byte by byte. */
    for (size_t cut = 0; cut <= sizeof all; cut++) {
        uint32_t crc = rs_crc32_update(0, all, cut);
        ck_assert_uint_eq(rs_crc32_update(crc, all + cut, sizeof all - cut), whole);
    }
    uint32_t crc = 0;
    for (size_t i = 0; i < sizeof all; i++)
        crc = rs_crc32_update(crc, all + i, 1);
    ck_assert_uint_eq(crc, whole);
    /* An empty piece changes nothing. */
    ck_assert_uint_eq(rs_crc32_update(whole, all, 0), whole);
    /* One flipped bit changes the checksum. */
    all[100] ^= 0x10;
    ck_assert_uint_ne(rs_crc32_update(0, all, sizeof all), whole);
}
END_TEST

Suite *crc32_suite(void)
{
    Suite *s = suite_create("crc32");
    TCase *tc = tcase_create("checksums");
    tcase_add_test(tc, crc32_known_answers);
    tcase_add_test(tc, crc32_in_pieces_equals_whole);
    suite_add_tcase(s, tc);
    return s;
}
