/* What every command needs before it starts, called first by main: SIGXFSZ
 * ignored (unless the caller ignores or catches it already), so that a file
 * size limit is a write error that names its file, and OpenBLAS's work
 * buffer mapped (common/blas_buffer.h), or "rnnsearch: out of memory: …" and
 * exit status 1 at once, where OpenBLAS 0.3.21 would spin for ever. */
#ifndef RS_CLI_START_H
#define RS_CLI_START_H

void rs_cli_start(void);

#endif
