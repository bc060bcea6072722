/* The one clock for measuring durations (training limits, throughput,
 * request timeouts, phase timing). */
#ifndef RS_CLOCK_H
#define RS_CLOCK_H

/* Seconds on the monotonic clock (CLOCK_MONOTONIC), from an arbitrary start:
 * only differences mean anything; never goes back when the date is set. */
double rs_clock_seconds(void);

#endif
