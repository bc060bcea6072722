#include <zlib.h>

#include "common/crc32.h"

uint32_t rs_crc32_update(uint32_t crc, const void *data, size_t len)
{
    /* zlib's crc32 takes lengths as uInt: feed larger buffers in pieces. */
    const unsigned char *p = data;
    uLong c = crc;
    while (len > 0) {
        uInt n = len > 0x40000000u ? 0x40000000u : (uInt)len;
        c = crc32(c, p, n);
        p += n;
        len -= n;
    }
    return (uint32_t)c;
}
