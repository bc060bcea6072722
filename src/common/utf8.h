/* UTF-8 validation for files the lowest layer reads (JSON, configuration
 * files), where text/ and utf8proc are not reachable: overlong forms,
 * encoded surrogates and code points above U+10FFFF are invalid, as in
 * utf8proc. */
#ifndef RS_UTF8_H
#define RS_UTF8_H

#include <stddef.h>

/* Length of the valid UTF-8 sequence at p (a non-ASCII lead byte), or 0. */
size_t rs_utf8_sequence(const unsigned char *p, const unsigned char *end);

/* Offset of the first byte of s[0..size) that is not valid UTF-8, or size. */
size_t rs_utf8_invalid(const unsigned char *s, size_t size);

#endif
