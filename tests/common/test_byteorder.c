/* Byte order (src/common/byteorder.c): the little-endian encoding of integers and
 * IEEE 754 binary32 floats that checkpoints and exports use. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "common/byteorder.h"

START_TEST(test_byte_order)
{
    unsigned char b[8];
    rs_put_le32(b, 0x11223344u);
    ck_assert(b[0] == 0x44 && b[1] == 0x33 && b[2] == 0x22 && b[3] == 0x11);
    ck_assert_uint_eq(rs_get_le32(b), 0x11223344u);
    rs_put_le64(b, 0x0102030405060708ull);
    ck_assert(b[0] == 0x08 && b[7] == 0x01);
    ck_assert(rs_get_le64(b) == 0x0102030405060708ull);
    /* 1.0f is 0x3f800000; -2.5f is 0xc0200000. */
    const float f[3] = {1.0f, -2.5f, INFINITY};
    unsigned char le[12];
    rs_f32_to_le(le, f, 3);
    ck_assert(le[0] == 0 && le[1] == 0 && le[2] == 0x80 && le[3] == 0x3f);
    ck_assert_uint_eq(rs_get_le32(le + 4), 0xc0200000u);
    float back[3];
    rs_f32_from_le(back, le, 3);
    ck_assert(!memcmp(back, f, sizeof f));
    ck_assert_uint_eq(rs_f32_bits(rs_f32_from_bits(0x7fc00001u)), 0x7fc00001u);
}
END_TEST

START_TEST(float_bits_round_trip)
{
    /* Bits survive the trip through a float, NaN payloads and signed zero
     * included; every byte position is placed. */
    const uint32_t bits[] = {0x00000000u, 0x80000000u, 0x00000001u, 0x7f7fffffu,
                             0xff800000u, 0x7fc00001u, 0xffc12345u, 0x12345678u};
    for (size_t i = 0; i < sizeof bits / sizeof *bits; i++) {
        float f = rs_f32_from_bits(bits[i]);
        unsigned char le[4];
        rs_f32_to_le(le, &f, 1);
        ck_assert_uint_eq(rs_get_le32(le), bits[i]);
        for (int k = 0; k < 4; k++)
            ck_assert_uint_eq(le[k], (bits[i] >> (8 * k)) & 0xFF);
        float back;
        rs_f32_from_le(&back, le, 1);
        ck_assert_uint_eq(rs_f32_bits(back), bits[i]);
    }
    ck_assert(signbit(rs_f32_from_bits(0x80000000u)));
    unsigned char b[8];
    rs_put_le64(b, 0xFFFFFFFFFFFFFFFEull);
    ck_assert(b[0] == 0xFE && b[7] == 0xFF);
    ck_assert(rs_get_le64(b) == 0xFFFFFFFFFFFFFFFEull);
}
END_TEST

Suite *byteorder_suite(void)
{
    Suite *s = suite_create("byteorder");
    TCase *tc = tcase_create("little-endian");
    tcase_add_test(tc, test_byte_order);
    tcase_add_test(tc, float_bits_round_trip);
    suite_add_tcase(s, tc);
    return s;
}
