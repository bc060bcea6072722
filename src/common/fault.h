/* Fault injection for the tests of interrupted training and of failing
 * writes. With RNNSEARCH_FAULT=POINT or POINT@N in the environment, the Nth
 * time (the first when N is not given) the program passes the point POINT it
 * fails there. rs_fault_point ends the program at once with
 * _exit(RS_FAULT_EXIT), leaving every file as a kill at that instant would.
 * Points: "rename" (a file written and synced, not yet renamed over the old
 * one), "log" (a training-log row appended), "best" (best.ckpt committed,
 * last.ckpt not yet), "last" (last.ckpt committed). rs_fault_fails returns 1
 * instead, and the caller fails as the point says. Points: "enospc" (an
 * atomically written file, common/fileio.c, whose writes then all fail with
 * ENOSPC: a full disk). Without the variable a point costs one getenv. */
#ifndef RS_FAULT_H
#define RS_FAULT_H

#define RS_FAULT_EXIT 86

void rs_fault_point(const char *point);
int rs_fault_fails(const char *point);

#endif
