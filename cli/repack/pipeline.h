/* pipeline.h - running many conversions into one output file
 *
 * On an OpenCL device, conversions are grouped (consecutive tensors whose
 * source and destination fit one slot) and each group is uploaded, converted
 * and downloaded on three queues: while one group's kernels run, the next
 * group uploads and the one before downloads. Three slots of device buffers
 * and pinned host staging bound the memory in flight. On a device that works
 * in host memory (CL_DEVICE_HOST_UNIFIED_MEMORY, as PoCL's CPU device) the
 * kernels read the mapped input in place and the results are mapped, not
 * copied. A tensor larger than a slot, or a plan on the reference, runs
 * alone through relayout_plan_run; so does, there, a tensor the file does
 * not store aligned to its element (OpenCL lets kernels assume that of a
 * host array they run on, and relayout_plan_run copies it instead).
 */
#ifndef RELAYOUT_PIPELINE_H
#define RELAYOUT_PIPELINE_H

#include "relayout.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

typedef struct pl_job {
  relayout_plan *plan;
  const unsigned char *src; /* in the mapped input */
  size_t src_size, dst_size;
  size_t unit;       /* the element's bytes (1 for 4-bit types) */
  uint64_t dst_at;   /* byte offset in the output file */
  double seconds;    /* filled: from submission to bytes back on the host */
  const char *where; /* filled: its family, "generic" or "reference" */
} pl_job;

/* Called after jobs complete, with the bytes they read and wrote. */
typedef void pl_progress(void *ctx, uint64_t bytes_read, uint64_t bytes_written,
                         int jobs);

struct cli_out;
typedef struct pl_output {
  struct cli_out *file;
  pl_progress *progress;
  void *ctx;
  pthread_mutex_t *lock; /* NULL, or held for writes and progress: runs on
                            several devices share the file (pl_run_all) */
} pl_output;

/* Runs jobs (sorted by source address) with at most max_memory bytes of
 * buffers in flight, writing each job's result at its dst_at (in job order
 * but for tensors that run alone). Stops with
 * RELAYOUT_ERR_IO when a signal was caught (cli_interrupted). */
relayout_status pl_run(pl_job *jobs, int njobs, relayout_engine *engine,
                       uint64_t max_memory, const pl_output *out,
                       relayout_error *err);

/* jobs over several engines at once, a thread each: job i on engine
 * device[i] (its plan made there), each engine with its share of
 * max_memory, into one file (not a stream: results come in no order).
 * The first failure is err's; the other engines finish their shares, and
 * the caller discards the file. */
relayout_status pl_run_all(pl_job *jobs, const int *device, int njobs,
                           relayout_engine *const *engines, int nengines,
                           uint64_t max_memory, const pl_output *out,
                           relayout_error *err);

#endif /* RELAYOUT_PIPELINE_H */
