#include <string.h>

#include "common/byteorder.h"

void rs_put_le32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

void rs_put_le64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

uint32_t rs_get_le32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v |= (uint32_t)p[i] << (8 * i);
    return v;
}

uint64_t rs_get_le64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

uint32_t rs_f32_bits(float f)
{
    uint32_t bits;
    memcpy(&bits, &f, 4);
    return bits;
}

float rs_f32_from_bits(uint32_t bits)
{
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

uint64_t rs_f64_bits(double d)
{
    uint64_t bits;
    memcpy(&bits, &d, 8);
    return bits;
}

double rs_f64_from_bits(uint64_t bits)
{
    double d;
    memcpy(&d, &bits, 8);
    return d;
}

/* On a little-endian host the file's bytes are the floats' own: one copy
 * (a checkpoint's millions of weights), the same bits as the loop. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HOST_IS_LE 1
#else
#define HOST_IS_LE 0
#endif

void rs_f32_to_le(unsigned char *dst, const float *src, size_t count)
{
    if (HOST_IS_LE) {
        memcpy(dst, src, 4 * count);
        return;
    }
    for (size_t i = 0; i < count; i++)
        rs_put_le32(dst + 4 * i, rs_f32_bits(src[i]));
}

void rs_f32_from_le(float *dst, const unsigned char *src, size_t count)
{
    if (HOST_IS_LE) {
        memcpy(dst, src, 4 * count);
        return;
    }
    for (size_t i = 0; i < count; i++)
        dst[i] = rs_f32_from_bits(rs_get_le32(src + 4 * i));
}
