/* Byte order of everything rnnsearch stores: integers and IEEE 754 binary32
 * (and binary64) floats, little-endian, whatever the host. */
#ifndef RS_BYTEORDER_H
#define RS_BYTEORDER_H

#include <stddef.h>
#include <stdint.h>

void rs_put_le32(unsigned char *p, uint32_t v);
void rs_put_le64(unsigned char *p, uint64_t v);
uint32_t rs_get_le32(const unsigned char *p);
uint64_t rs_get_le64(const unsigned char *p);

/* count floats to/from 4 * count bytes. */
void rs_f32_to_le(unsigned char *dst, const float *src, size_t count);
void rs_f32_from_le(float *dst, const unsigned char *src, size_t count);

/* A float's bits as a 32-bit integer, and back. */
uint32_t rs_f32_bits(float f);
float rs_f32_from_bits(uint32_t bits);

/* A double's bits (IEEE 754 binary64) as a 64-bit integer, and back. */
uint64_t rs_f64_bits(double d);
double rs_f64_from_bits(uint64_t bits);

#endif
