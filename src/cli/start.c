/* What every command needs before it starts (start.h). */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/start.h"
#include "common/blas_buffer.h"

void rs_cli_start(void)
{
    /* Past a file size limit (ulimit -f) a write fails with EFBIG instead of
     * ending the program by SIGXFSZ: the error path then removes the
     * temporary file and says which output could not be written ("File too
     * large"), training's checkpoints included. */
    struct sigaction old;
    if (!sigaction(SIGXFSZ, NULL, &old) && old.sa_handler == SIG_DFL)
        signal(SIGXFSZ, SIG_IGN);
    rs_error err;
    if (rs_blas_reserve(&err)) {
        /* At once: OpenBLAS's threads that could not map their buffers spin,
         * and exit() would wait for them. */
        fprintf(stderr, "rnnsearch: %s\n", err.msg);
        _exit(RS_EXIT_FAIL);
    }
}
