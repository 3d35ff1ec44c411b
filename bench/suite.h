/* suite.h - relayout bench --suite: real-world rows next to the peers */
#ifndef RELAYOUT_BENCH_SUITE_H
#define RELAYOUT_BENCH_SUITE_H

/* Runs the rows whose name holds one of the comma-separated texts in `rows`
 * (NULL: all) on `device`, each
 * with `runs` timed runs; a markdown table, or JSON lines with json.
 * Returns the exit code. */
int bench_suite(const char *device, const char *rows, int runs, int json);

#endif /* RELAYOUT_BENCH_SUITE_H */
