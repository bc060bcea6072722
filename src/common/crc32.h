/* CRC-32 as in zlib, PNG and gzip (reflected polynomial 0xEDB88320, initial
 * value and final xor 0xFFFFFFFF): the checksum of "123456789" is 0xCBF43926.
 * Computed by zlib's crc32 (several bytes per step), so the values are
 * zlib's own: checkpoints written with the byte-table loop used before load. */
#ifndef RS_CRC32_H
#define RS_CRC32_H

#include <stddef.h>
#include <stdint.h>

/* Continues a checksum: start with crc = 0, feed the bytes in any number of
 * pieces, and the result after the last piece is the CRC-32 of them all. */
uint32_t rs_crc32_update(uint32_t crc, const void *data, size_t len);

#endif
