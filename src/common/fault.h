/* Fault injection for the tests of interrupted training. With
 * RNNSEARCH_FAULT=POINT or POINT@N in the environment, the Nth time (the
 * first when N is not given) the program passes rs_fault_point("POINT") it
 * ends at once with _exit(RS_FAULT_EXIT), leaving every file as a kill at
 * that instant would. Points: "rename" (a file written and synced, not yet
 * renamed over the old one), "log" (a training-log row appended), "best"
 * (best.ckpt committed, last.ckpt not yet), "last" (last.ckpt committed).
 * Without the variable a point costs one getenv. */
#ifndef RS_FAULT_H
#define RS_FAULT_H

#define RS_FAULT_EXIT 86

void rs_fault_point(const char *point);

#endif
