/* measure.h - timing one conversion next to the device's copy bandwidth */
#ifndef RELAYOUT_BENCH_MEASURE_H
#define RELAYOUT_BENCH_MEASURE_H

#include "relayout_cl.h"

/* Median seconds of `runs` timed calls of run(ctx) after two warm-up calls;
 * < 0 when a call fails (returns nonzero). */
double bench_median(int (*run)(void *), void *ctx, int runs);

/* Fills n bytes with a pattern that is a finite normal number in every
 * float type (each byte 0x10..0x3F), so that peers converting through
 * floats keep it bit for bit. */
void bench_fill(unsigned char *p, int64_t n);

/* Whether the engine's device is a GPU (0 for the reference). */
int bench_is_gpu(relayout_engine *e);

/* What bench_measure found. GB/s count bytes read + written. */
typedef struct bench_result {
  double t_conv;   /* the conversion, median seconds */
  double t_enq;    /* clEnqueueCopyBuffer (memcpy on the reference) */
  double t_kernel; /* the plain copy kernel (memcpy on the reference) */
  int64_t src_bytes, dst_bytes, copy_bytes;
} bench_result;

/* One shape of a batch: its plan (or preprocessing plan: pre), source
 * bytes, the reference's result, and how many tensors of it the batch
 * converts. */
typedef struct bench_shape {
  relayout_plan *plan;
  relayout_preprocess_plan *pre;
  const unsigned char *in, *ref;
  int64_t src_bytes, dst_bytes;
  int count;
} bench_shape;

/* Times the shapes' tensors, each on device buffers of its own, enqueued
 * back to back and waited on once, as a model's weights are converted (the
 * launches overlap instead of each waiting for the device), and the copy
 * kernel and clEnqueueCopyBuffer over the same buffers the same way; r's
 * byte counts are the totals. *same receives whether every tensor's
 * result equals its shape's ref. Returns 0, or -1 when the device failed
 * or the engine is the reference. */
int bench_measure_batch(bench_result *r, relayout_engine *e,
                        const bench_shape *shapes, int n, int runs, int *same);

/* One shape (its count is ignored), timed on its engine's device as a
 * batch of one, or on the reference engine the reference against memcpy
 * (s and d are its descriptors); *same receives whether the result equals
 * x->ref. Returns 0, or -1 when the device failed. */
int bench_measure(bench_result *r, relayout_engine *e, const bench_shape *x,
                  const relayout_desc *s, const relayout_desc *d, int runs,
                  int *same);

/* Times the shapes' tensors from host arrays of their own (page-aligned,
 * sources copied from each shape's `in`): relayout_plans_run over all of
 * them (*one_call) and, unless each is NULL, relayout_plan_run on each in
 * turn (*each), median seconds. *same receives whether every result, after each
 * way, equals its shape's ref, the destinations poisoned before each. Returns
 * 0, or -1 when a run failed or fell back to the reference. */
int bench_host_batch(const bench_shape *shapes, int n, int runs,
                     double *one_call, double *each, int *same);

#endif /* RELAYOUT_BENCH_MEASURE_H */
