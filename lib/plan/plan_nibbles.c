/* plan_nibbles.c - the planner's CPU family for 4-bit elements: boxes that
 * write whole bytes, as squares of nibbles or runs of words
 */
#include "plan_lines.h"

/* 4-bit on CPU devices: boxes of rows that start on whole bytes (K's
 * extent and every other destination stride even, nothing skipped), so
 * that each work-item writes whole bytes of its own. They move element by
 * element, two nibbles to a byte (kernels/lines_nibbles.cl RL_NIBBLES); the
 * rest gathers nibble by nibble. */
static int nibble_rows(const rl_layout_plan *p) {
  if (!p->naxes || p->skip || p->axes[p->naxes - 1].dstride != 1 ||
      p->axes[p->naxes - 1].extent % 2)
    return 0;
  for (int i = 0; i + 1 < p->naxes; i++)
    if (p->axes[i].dstride % 2) return 0;
  return 1;
}

/* 4-bit boxes whose source runs along P: 8 x 8 squares of nibbles
 * (kernels/lines_nibbles.cl rl_nibble_squares), boxes starting at multiples of
 * 8 along P (its block a multiple of 8, or its whole extent), the last block
 * along P over part of the one before. Where every other source stride and P's
 * extent are even, each row of a square starts on a whole byte; else (odd: NCHW
 * -> FRACTAL_Z from 3x3 weights, rows 9 nibbles apart) a row may start mid-
 * byte, and its words are moved down a nibble.
 * Measured: docs/notes/PLANNER.md, "plan_nibbles.c, nibble_squares". */
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

/* 4-bit squares whose box writes rows more than one block along K (32 nibbles)
 * long, no Q, into a destination too big for the cache: as plan_staged, the box
 * goes to a private buffer of up to 16 KiB, then out in order with non-temporal
 * stores, and each source row's load first asks for the line 3 lines on
 * (RL_LEAD, in nibbles). Where the rows are one run (K all of its axis, P's
 * rows following one another: NCHW -> NHWC, NC1HWC0), whole blocks of 64 along
 * P; else where each row starts on the 16-byte grid (NHWC -> NCHW, NC1HWC0 ->
 * NCHW, FRACTAL_ZN -> ND), K's block cut to fit.
 * Measured: docs/notes/PLANNER.md, "plan_nibbles.c, nibble_staged". */
static void nibble_staged(rl_layout_plan *p, const rl_desc *dst,
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
 * FRACTAL_NZ with N odd, each row copied as words, moved down a nibble where it
 * starts mid-byte), into a destination too big for the cache, where every row
 * starts on the 16-byte grid (K's block and every other destination stride
 * multiples of 32 nibbles): 16-byte pieces, with non-temporal stores.
 * Measured: docs/notes/PLANNER.md, "plan_nibbles.c, nibble_stream". */
static void nibble_stream(rl_layout_plan *p, const rl_desc *dst,
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
 * innermost axis, odd and whole in each box, and P's rows following one another
 * there (FRACTAL_Z -> NCHW from 3x3 weights, NHWC -> NCHW at 7x7). Each step
 * along Q then writes one run, P's block of rows, which starts and ends on
 * whole bytes where P's block and extent are even and every other destination
 * stride is even. The box puts each run together in a private buffer of up to 8
 * KiB, its squares' rows a word at a time at any nibble, the rest nibble by
 * nibble, and writes it out whole (kernels/lines_nibbles.cl RL_ODD_K). Nothing
 * skipped and no padding in the destination: every nibble of a run is data.
 * Measured: docs/notes/PLANNER.md, "plan_nibbles.c, nibble_odd_k". */
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
  /* K shorter than a square (1x7 weights): nibble by nibble, faster than
   * the gather (docs/notes/PLANNER.md, "plan_nibbles.c, nibble_odd_k") */
  return nibble_squares(p) || (p->axes[P->axis].sstride == 1 && K->block < 8);
}

void rl_plan_nibbles(rl_layout_plan *p, const rl_desc *dst,
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
