/* A configuration file read from disk: through the one line reader every text
 * input takes (text/corpus.h: a byte order mark dropped, \n, \r\n or a lone
 * \r ending a line, gzip decompressed, a pipe read as it arrives, a NUL byte
 * or an over-long line refused with file:line), then parsed by
 * common/settings.h. */
#ifndef RS_SETTINGS_FILE_H
#define RS_SETTINGS_FILE_H

#include "common/error.h"
#include "common/settings.h"

/* Reads path ("-": stdin), at most RS_SETTINGS_MAX_BYTES of text, counting
 * one byte for each line end but a last one; errors name it and the line
 * ("run.yaml:3: …"). The text read
 * stays in out->text (a pipe cannot be read twice). */
int rs_settings_read(const char *path, rs_settings *out, rs_error *err);

#endif
