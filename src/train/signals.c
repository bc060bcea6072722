/* How a training run is stopped from outside (signals.h). */
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "train/signals.h"

static volatile sig_atomic_t stop_signal;
static atomic_int signals_seen;

volatile sig_atomic_t *rs_train_signal(void)
{
    return &stop_signal;
}

static void on_signal(int sig)
{
    if (atomic_fetch_add(&signals_seen, 1) > 0)
        _exit(128 + sig);
    stop_signal = sig;
}

void rs_train_catch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}
