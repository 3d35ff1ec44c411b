/* plan_nibbles.c - the planner's CPU family for 4-bit elements: boxes that
 * write whole bytes, as squares of nibbles or runs of words
 */
#include "plan_lines.h"

/* 4-bit on CPU devices: boxes of rows that start on whole bytes (K's
 * extent and every other destination stride even, nothing skipped), so
 * that each work-item writes whole bytes of its own. They move element by
 * element, two nibbles to a byte (kernels/relayout.cl RL_NIBBLES); the rest
 * gathers nibble by nibble. */
static int nibble_rows(const rl_layout_plan *p) {
  if (!p->naxes || p->skip || p->axes[p->naxes - 1].dstride != 1 ||
      p->axes[p->naxes - 1].extent % 2)
    return 0;
  for (int i = 0; i + 1 < p->naxes; i++)
    if (p->axes[i].dstride % 2) return 0;
  return 1;
}

/* 4-bit boxes whose source runs along P: 8 x 8 squares of nibbles
 * (kernels/relayout.cl rl_nibble_squares), boxes starting at multiples of 8
 * along P (its block a multiple of 8, or its whole extent), the last block
 * along P over part of the one before. Where every other source stride and
 * P's extent are even, each row of a square starts on a whole byte; else
 * (odd: NCHW -> FRACTAL_Z from 3x3 weights, rows 9 nibbles apart) a
 * row may start mid-byte, and its words are moved down a nibble. NCHW ->
 * NHWC int4 64x256x56x56 moved element by element at 0.07 of the copy
 * kernel's speed on the development machine, in squares at 0.36-0.37
 * (bench/TUNING.md, "4-bit squares"); NCHW -> FRACTAL_Z 2048x2048x3x3 and
 * NCHW -> NHWC 64x512x7x7, element by element at 0.07 and 0.03-0.04, with
 * odd rows at 0.28-0.29 and 0.14-0.36 ("4-bit rows that start
 * mid-byte"). */
static int nibble_squares(rl_layout_plan *p) {
  const rl_box_axis *P = &p->box[0];
  if (P->axis < 0 || p->axes[P->axis].sstride != 1 || p->box[2].block < 8 ||
      (P->block % 8 && P->block < p->axes[P->axis].extent))
    return 0;
  for (int i = 0; i < p->naxes; i++)
    if (i != P->axis && p->axes[i].sstride % 2) p->odd = 1;
  if (p->axes[P->axis].extent % 2) p->odd = 1;
  return 1;
}

/* 4-bit squares whose box writes rows more than one block along K (32
 * nibbles) long, no Q, into a destination too big for the cache: as
 * plan_staged, the box goes to a private buffer of up to 16 KiB, then out
 * in order with non-temporal stores, and each source row's load first
 * asks for the line 3 lines on (RL_LEAD, in nibbles). Where the rows are
 * one run (K all of its axis, P's rows following one another: NCHW ->
 * NHWC, NC1HWC0), whole blocks of 64 along P; else where each row starts
 * on the 16-byte grid (NHWC -> NCHW, NC1HWC0 -> NCHW, FRACTAL_ZN -> ND),
 * K's block cut to fit. Before, each destination row took 16 bytes from
 * each block along K, plain stores. Alternating runs on the 2-core
 * machine, 2 or 3 rounds, ratio to the copy kernel before and after
 * (int4): NCHW -> NHWC 64x256x56x56 0.37-0.39 and 0.70-0.71,
 * 64x64x112x112 0.45-0.46 and 0.62-0.70, 2048x2048x4x4 0.57-0.65 and
 * 0.81-0.89; NCHW -> NC1HWC0 64x256x56x56 0.41 and 0.58-0.63,
 * 32x512x28x28 0.30-0.37 and 0.40-0.44; NHWC -> NCHW 64x56x56x256
 * 0.52-0.58 and 0.59-0.64, 64x112x112x64 0.59-0.64 and 0.82-0.94;
 * NC1HWC0 -> NCHW 64x256x56x56 0.66-0.67 and 0.76; NCHW -> FRACTAL_Z
 * 64x256x56x56 0.31-0.33 and 0.39. Not where one block writes each row
 * whole, one run (ND -> FRACTAL_ZN, 16 nibbles): 0.71-0.79 staged,
 * 0.73-0.80 not. Without the prefetch, NCHW -> NHWC 0.56-0.62 and
 * NC1HWC0 0.38-0.46. */
static void nibble_staged(rl_layout_plan *p, const relayout_desc *dst,
                          int64_t stream_from) {
  const rl_box_axis *P = &p->box[0], *K = &p->box[2];
  const rl_iter_axis *a = &p->axes[P->axis], *k = &p->axes[K->axis];
  int64_t rows = 32768 / k->extent / 64 * 64; /* 16 KiB of nibbles */
  if (!rl_too_big(dst, stream_from) || p->box[1].axis >= 0 || k->extent <= 32)
    return;
  if (a->dstride == k->extent && K->block == k->extent && rows >= 64 &&
      a->extent >= 64) /* one run */
    rl_box_block(p, 0, rows < a->extent ? rows : a->extent / 64 * 64);
  else if (K->block % 32 == 0 && a->dstride % 32 == 0 && P->block <= 1024) {
    int64_t cut = 32768 / P->block / 32 * 32; /* rows on the grid */
    if (cut < K->block) rl_box_block(p, 2, cut);
  } else
    return;
  p->staged = (int)(P->block * K->block / 32);
  p->stream = 16;
  p->lead = 3 * 128;
}

/* 4-bit boxes of whole rows contiguous in the source (no transpose: ND ->
 * FRACTAL_NZ with N odd, each row copied as words, moved down a nibble
 * where it starts mid-byte), into a destination too big for the cache,
 * where every row starts on the 16-byte grid (K's block and every other
 * destination stride multiples of 32 nibbles): 16-byte pieces, with
 * non-temporal stores. ND -> FRACTAL_NZ int4 4096x11007 on the development
 * machine: 0.10-0.11 of the copy kernel element by element, 0.28-0.35 as
 * words with plain stores, 0.52-0.64 streamed. */
static void nibble_stream(rl_layout_plan *p, const relayout_desc *dst,
                          int64_t stream_from) {
  const rl_box_axis *K = &p->box[2];
  if (!rl_too_big(dst, stream_from) || K->axis < 0 ||
      p->axes[K->axis].sstride != 1 || K->block % 32)
    return;
  for (int i = 0; i < p->naxes; i++)
    if (i != K->axis && p->axes[i].dstride % 32) return;
  p->stream = 16;
}

/* 4-bit boxes whose destination rows start mid-byte: K, the destination's
 * innermost axis, odd and whole in each box, and P's rows following one
 * another there (FRACTAL_Z -> NCHW from 3x3 weights, NHWC -> NCHW at 7x7).
 * Each step along Q then writes one run, P's block of rows, which starts
 * and ends on whole bytes where P's block and extent are even and every
 * other destination stride is even. The box puts each run together in a
 * private buffer of up to 8 KiB, its squares' rows a word at a time at
 * any nibble, the rest nibble by nibble, and writes it out whole
 * (kernels/relayout.cl RL_ODD_K). Nothing skipped and no padding in the
 * destination: every nibble of a run is data. These had gathered nibble
 * by nibble; on the development machine FRACTAL_Z -> NCHW int4
 * 2048x2048x3x3 went from 0.22 to 4.2-4.3 GB/s (0.01 of the copy kernel
 * to 0.23-0.27), NHWC -> NCHW 256x7x7x2048 from 0.32 to 3.6-3.7
 * (bench/TUNING.md, "4-bit destination rows that start mid-byte"). */
static int nibble_odd_k(rl_layout_plan *p) {
  const rl_box_axis *P = &p->box[0], *K = &p->box[2];
  int64_t ek = p->axes[K->axis].extent;
  if (P->axis < 0 || ek % 2 == 0 || K->block != ek ||
      p->axes[P->axis].dstride != ek || p->axes[P->axis].extent % 2)
    return 0;
  for (int i = 0; i < p->naxes; i++)
    if (p->axes[i].check >= 0 ||
        (i != P->axis && i != K->axis && p->axes[i].dstride % 2))
      return 0;
  int64_t most = 16384 / ek / 8 * 8; /* 8 KiB of nibbles */
  if (most < 8) return 0;
  if (P->block > most) rl_box_block(p, 0, most);
  if (P->block % 8 && P->block < p->axes[P->axis].extent)
    rl_box_block(p, 0, P->block < 8 ? 8 : P->block / 8 * 8);
  /* K shorter than a square (1x7 weights): nibble by nibble, FRACTAL_Z ->
   * NCHW int4 256x256x1x7 at 0.75-0.77 GB/s against the gather's
   * 0.15-0.19 */
  return nibble_squares(p) || (p->axes[P->axis].sstride == 1 && K->block < 8);
}

void rl_plan_nibbles(rl_layout_plan *p, const relayout_desc *dst,
                     int64_t stream_from) {
  rl_layout_plan b = *p;
  b.family = RL_FAMILY_LINES;
  rl_plan_box(&b, 1);
  /* squares of their own (or none), and no prefetches but those of
   * staged boxes */
  b.ahead = b.lead = 0;
  if (nibble_rows(&b)) {
    b.vec = nibble_squares(&b) ? 8 : 1;
    if (b.vec == 8)
      nibble_staged(&b, dst, stream_from);
    else
      nibble_stream(&b, dst, stream_from);
    *p = b;
  } else if (nibble_odd_k(&b)) {
    b.vec = 8;
    b.odd_k = 1;
    *p = b;
  }
}
