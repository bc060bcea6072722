/* How a training run is stopped from outside: the first SIGINT, SIGTERM or
 * SIGHUP asks the loop to stop after the current step (rs_train_options.stop,
 * train.h: last.ckpt is saved); a second one ends the program at once,
 * before it touches a file, with the status the shell gives a program ended
 * by that signal (128 + N). Signals may land on any thread (the shards'
 * workers too), two at once on two threads: a count taken atomically says
 * which came first. */
#ifndef RS_TRAIN_SIGNALS_H
#define RS_TRAIN_SIGNALS_H

#include <signal.h>

/* The number of the signal that asked to stop; 0 while none has. */
volatile sig_atomic_t *rs_train_signal(void);

/* Installs the handlers of SIGINT, SIGTERM and SIGHUP. */
void rs_train_catch_signals(void);

#endif
