/* Training's log: what `train` shows on standard error, each line starting
 * with the time in ISO 8601, UTC ("2026-11-25T04:05:30Z "), and the same
 * lines appended to a log file (the model directory's train.log, or --log
 * FILE), as Joey NMT's train.log. Only the command layer writes it. */
#ifndef RS_LOG_H
#define RS_LOG_H

#include <stddef.h>
#include <stdio.h>

#include "common/error.h"

/* Appends to path from now on (creating it); the file names itself in err. */
int rs_log_open(const char *path, rs_error *err);

/* Stops writing to the file (standard error goes on). */
void rs_log_close(void);

/* printf to standard error and the open log. A line may be written in
 * several calls: the time goes before its first part. */
void rs_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* For functions that print to a FILE: a stream whose text rs_log_flush
 * then logs (and closes). NULL when out of memory. */
typedef struct {
    FILE *f;
    char *text;
    size_t size;
} rs_log_capture;
FILE *rs_log_capture_begin(rs_log_capture *c);
void rs_log_capture_end(rs_log_capture *c);

/* The current time as "YYYY-MM-DDTHH:MM:SSZ" (UTC) in buf[21]. */
void rs_log_timestamp(char buf[21]);

#endif
