/* peer.h - other libraries doing a suite row's conversion, for comparison */
#ifndef RELAYOUT_BENCH_PEER_H
#define RELAYOUT_BENCH_PEER_H

#include "relayout.h"

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

/* Tensors for a peer: `count` conversions of `in` (s's bytes) to d, whose
 * results must equal `want`. */
typedef struct peer_tensors {
  const relayout_desc *s, *d;
  const unsigned char *in, *want;
  int count;
} peer_tensors;

/* oneDNN's reorder on the CPU, from the library found at build time: every
 * tensor of t[0..n), each on memory of its own (the first of each entry
 * reads its `in`), run back to back with one wait, as a model's weights
 * are repacked; a single tensor is n = 1, count 1. */
void peer_onednn(peer_result *r, const peer_tensors *t, int n, int runs);

/* numpy (pad + reshape + transpose) on the CPU, or PyTorch (the same on
 * the GPU): `backend` "numpy" or "torch", run by the interpreter found at
 * build time with bench/peer.py. Where the dtypes differ, the peer casts
 * too (astype, or quantizing with `scale` and zero point 0). */
void peer_python(peer_result *r, const char *backend, const relayout_desc *s,
                 const relayout_desc *d, float scale, const unsigned char *in,
                 const unsigned char *want, int runs);

#endif /* RELAYOUT_BENCH_PEER_H */
