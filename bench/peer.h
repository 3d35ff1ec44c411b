/* peer.h - other libraries doing a suite row's conversion, for comparison */
#ifndef RELAYOUT_BENCH_PEER_H
#define RELAYOUT_BENCH_PEER_H

#include "relayout.h"
#include "relayout_preprocess.h"

#include <stddef.h>

typedef struct peer_result {
  double seconds; /* median of its timed runs; < 0 when it did not run */
  int runs;
  int same;       /* its output equals `want`, byte for byte */
  char note[256]; /* why it did not run, or what ran */
} peer_result;

/* Whether a layout is plain enough for the peers: compact (each axis a
 * block of one dim, no gaps), no padding before the data, no groups.
 * Otherwise fills r->note and returns 0. */
int peer_expressible(peer_result *r, const relayout_desc *d);

/* The runs a peer takes: `runs`, or 3 when one run takes over a second
 * (oneDNN's reference reorders). */
int peer_runs(double first_seconds, int runs);

/* Each peer converts `in` (s's bytes) to d, times it over `runs` runs and
 * compares its first output with `want` (the scalar reference's result). */

/* A quantizing cast's scales, zero point 0: `count` of them (1: one for
 * the tensor) along logical dim `dim`; count 0: none (scale 1). */
typedef struct peer_quant {
  const float *scales;
  int64_t count;
  int dim;
} peer_quant;

/* Tensors for a peer: `count` conversions of `in` (s's bytes) to d,
 * quantized with q where d is an integer type, whose results must equal
 * `want`; or, with aipp (s NULL), d's N frames in `in` preprocessed. */
typedef struct peer_tensors {
  const relayout_desc *s, *d;
  const unsigned char *in, *want;
  int count;
  peer_quant q;
  const relayout_aipp *aipp;
} peer_tensors;

/* oneDNN's reorder on the CPU, from the library found at build time: every
 * tensor of t[0..n), each on memory of its own (the first of each entry
 * reads its `in`), run back to back with one wait, as a model's weights
 * are repacked; a single tensor is n = 1, count 1. A quantizing cast takes
 * oneDNN's output scales (1 / scale, per tensor or per channel). */
void peer_onednn(peer_result *r, const peer_tensors *t, int n, int runs);

/* numpy (pad + reshape + transpose) on the CPU, or PyTorch (the same on
 * the GPU): `backend` "numpy" or "torch", run by the interpreter found at
 * build time with bench/peer.py, on t (count 1). Where the dtypes differ,
 * the peer casts too (astype, or quantizing with t->q). A preprocessing
 * (t->aipp) runs on numpy, AIPP's steps exactly, or on "opencv", as its
 * users write it (its note gives how far it is from AIPP's values). */
void peer_python(peer_result *r, const char *backend, const peer_tensors *t,
                 int runs);

#endif /* RELAYOUT_BENCH_PEER_H */
