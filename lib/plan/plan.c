/* plan.c - the planner: destination axes refined, mapped, merged; a family
 * chosen
 *
 * Works from the destination side, so every destination element is written
 * exactly once, padding included. When each destination axis (split at the
 * source's block boundaries) moves the source offset by a fixed stride, the
 * map is affine: axes contiguous in both layouts merge and the kernel needs
 * no division beyond its own index. Otherwise the kernel evaluates both
 * layouts' formulas per element (the gather family). CPU plans of the
 * lines family are planned in plan_lines.c and plan_nibbles.c.
 */
#include "plan_lines.h"

#include <string.h>

/* The source axis of dim `dim` whose range holds weights [lo, hi): its
 * weight divides lo and it reaches hi (the dim's outermost axis reaches
 * every valid coordinate). Returns its index, or -1. */
static int src_axis_for(const rl_desc *src, int dim, int64_t lo, int64_t hi) {
  int outer = -1;
  for (int b = 0; b < src->naxes; b++)
    if (src->axes[b].dim == dim &&
        (outer < 0 || src->axes[b].weight > src->axes[outer].weight))
      outer = b;
  for (int b = 0; b < src->naxes; b++) {
    const relayout_axis *x = &src->axes[b];
    if (x->dim != dim || x->weight > lo || lo % x->weight) continue;
    if (b == outer || hi <= x->weight * x->extent) return b;
  }
  return -1;
}

/* Splits destination axis a at the source weights inside its range and maps
 * each piece to a source stride; 0 when a piece has no affine source. For a
 * dim in `beyond` (a bit per dim), the outermost piece may end inside a
 * source block (C = 17 into NCHW from C0 blocks of 16): it runs on to the
 * block's end, and the pieces carry the dim's check, past whose padded
 * extent there is no destination element (the plan's `skip`). Dim `keep`'s
 * pieces carry its check too, so that its coordinate is at hand. */
static int refine(rl_layout_plan *p, const rl_desc *dst, const rl_desc *src,
                  const relayout_axis *a, unsigned beyond, int keep) {
  int64_t cuts[RELAYOUT_MAX_AXES * 2 + 2];
  int ncuts = 0;
  int64_t top = a->weight * a->extent;
  cuts[ncuts++] = a->weight;
  int64_t outer = 0; /* the source dim's outermost weight: no top edge */
  for (int b = 0; b < src->naxes; b++)
    if (src->axes[b].dim == a->dim && src->axes[b].weight > outer)
      outer = src->axes[b].weight;
  for (int b = 0; b < src->naxes; b++) {
    const relayout_axis *x = &src->axes[b];
    if (x->dim != a->dim) continue;
    int64_t edges[2] = {x->weight,
                        x->weight == outer ? 0 : x->weight * x->extent};
    for (int k = 0; k < 2; k++)
      if (edges[k] > a->weight && edges[k] < top) cuts[ncuts++] = edges[k];
  }
  /* sort ascending, drop repeats */
  for (int i = 1; i < ncuts; i++)
    for (int j = i; j > 0 && cuts[j - 1] > cuts[j]; j--) {
      int64_t t = cuts[j];
      cuts[j] = cuts[j - 1];
      cuts[j - 1] = t;
    }
  int n = 0;
  for (int i = 0; i < ncuts; i++)
    if (!n || cuts[n - 1] != cuts[i]) cuts[n++] = cuts[i];
  cuts[n] = top;
  int past = beyond >> a->dim & 1,
      checked =
          a->dim == keep || past || dst->padded[a->dim] > dst->dims[a->dim];
  int check = checked ? a->dim : -1;
  /* outermost piece first */
  for (int i = n - 1; i >= 0; i--) {
    int64_t lo = cuts[i], hi = cuts[i + 1];
    if (hi % lo && past && i == n - 1) hi += lo - hi % lo;
    if (hi % lo) return 0;
    int b = src_axis_for(src, a->dim, lo, hi);
    if (b < 0) return 0;
    if (p->naxes == (int)(sizeof p->axes / sizeof p->axes[0])) return 0;
    p->axes[p->naxes++] = (rl_iter_axis){
        .extent = hi / lo,
        .dstride = a->stride * (lo / a->weight),
        .sstride = src->axes[b].stride * (lo / src->axes[b].weight),
        .weight = lo,
        .dim = a->dim,
        .dims = 1u << a->dim,
        .check = check};
  }
  return 1;
}

/* Merges axis i into axis i+1 (its inner neighbour) where both layouts step
 * over the inner one exactly, and the bounds check still has the dim's
 * coordinate at hand. */
static void merge(rl_layout_plan *p) {
  int n = 0;
  rl_iter_axis *ax = p->axes;
  for (int i = p->naxes - 1; i >= 0; i--) {
    rl_iter_axis a = ax[i];
    if (a.extent == 1) continue;
    rl_iter_axis *in = n ? &ax[p->naxes - n] : NULL; /* last kept, inner */
    int fits = in && a.dstride == in->dstride * in->extent &&
               a.sstride == in->sstride * in->extent;
    int same_dim =
        in && a.dim == in->dim && a.weight == in->weight * in->extent;
    if (fits && ((a.check < 0 && in->check < 0) || same_dim)) {
      in->extent *= a.extent;
      in->dims |= a.dims;
      if (!same_dim) in->dim = -1;
      continue;
    }
    ax[p->naxes - ++n] = a;
  }
  memmove(ax, ax + p->naxes - n, (size_t)n * sizeof *ax);
  p->naxes = n;
}

/* The destination's axes refined with `beyond` (refine); 0 when one has no
 * affine source. */
static int refine_all(rl_layout_plan *p, const rl_desc *dst, const rl_desc *src,
                      unsigned beyond, int keep) {
  p->naxes = 0;
  for (int i = 0; i < dst->naxes; i++)
    if (dst->axes[i].extent > 1 &&
        !refine(p, dst, src, &dst->axes[i], beyond, keep))
      return 0;
  return 1;
}

/* The map is affine when every destination axis refines. The dims whose
 * destination extent, padded or not, ends inside a source block
 * (unpacking: NC1HWC0 -> NCHW with C = 17, FRACTAL_NZ -> ND off the
 * fractal grid; nChw16c -> nChw8c with C = 17, whose 24 padded channels
 * end inside the second block of 16) may run on to the block's end: the
 * plan then skips what lies past the destination's end (`skip`). */
static void affine(rl_layout_plan *p, const rl_desc *dst, const rl_desc *src,
                   int keep) {
  p->naxes = 0;
  if (rl_remapped(dst) || rl_remapped(src) || !dst->compact) return;
  for (int d = 0; d < dst->nvdims; d++)
    if (dst->pad_before[d] || src->pad_before[d]) return;
  if (!refine_all(p, dst, src, 0, keep)) {
    unsigned beyond = 0; /* the dims whose axes refine only so */
    for (int i = 0; i < dst->naxes; i++) {
      rl_layout_plan one = {0};
      unsigned bit = 1u << dst->axes[i].dim;
      int fails = dst->axes[i].extent > 1 &&
                  !refine(&one, dst, src, &dst->axes[i], 0, keep);
      one.naxes = 0;
      if (fails && refine(&one, dst, src, &dst->axes[i], bit, keep))
        beyond |= bit;
    }
    if (!beyond || !refine_all(p, dst, src, beyond, keep)) {
      p->naxes = 0;
      return;
    }
    p->skip = beyond;
  }
  merge(p);
  p->affine = 1;
}
/* log2 of the least power of two >= n */
static int ceil_log2(int64_t n) {
  int b = 0;
  while (((int64_t)1 << b) < n) b++;
  return b;
}

/* Widens the box along order[0..n) (innermost first, each axis' stride in
 * stride[]) until it holds a run of `run` contiguous elements: whole axes
 * while each continues the last, then a block of the next. */
static void stage_run(rl_layout_plan *p, const int *order, int n,
                      const int64_t *stride, int64_t run) {
  int64_t have = 1;
  for (int i = 0; i < n && have < run; i++) {
    const rl_iter_axis *a = &p->axes[order[i]];
    if (stride[order[i]] != have) break;
    int64_t want = (run + have - 1) / have;
    int b = ceil_log2(want < a->extent ? want : a->extent);
    if (b > p->stage_bits[order[i]]) p->stage_bits[order[i]] = b;
    if (((int64_t)1 << b) < a->extent) break;
    have *= a->extent;
  }
}

/* GPU: the box a work-group moves through local memory. Each axis' block is
 * a power of two, so an element's place in the box splits into a part from
 * the work-item's id and a constant part per unrolled step. The box reads
 * runs of at least 128 bytes from the source and writes such runs to the
 * destination; it then grows along the destination (longer runs) to 8192
 * elements and is cut back to 16 KiB of local memory (with the bank gaps
 * at most 24 KiB; OpenCL guarantees 32 KiB). In a cast the runs are each
 * side's 128 bytes, `size` the destination's element and `ssize` the
 * source's, which the box holds. On the H100, 8192
 * 2-byte elements took ND -> FRACTAL_NZ f16 8197x8195 from 0.77 of copy (1024)
 * to 0.89, while 2048 and 4096 gave 0.51-0.53. */
static void plan_stage(rl_layout_plan *p, int size, int ssize) {
  int n = p->naxes, dorder[RELAYOUT_MAX_AXES * 2] = {0},
      *sorder = p->stage_sorder;
  int64_t dstride[RELAYOUT_MAX_AXES * 2] = {0},
                                      sstride[RELAYOUT_MAX_AXES * 2] = {0};
  for (int i = 0; i < n; i++) {
    dorder[i] = n - 1 - i;
    sorder[i] = i;
    dstride[i] = p->axes[i].dstride;
    sstride[i] = p->axes[i].sstride;
    p->stage_bits[i] = 0;
  }
  for (int i = 1; i < n; i++) /* source order: stride ascending */
    for (int j = i; j > 0 && sstride[sorder[j - 1]] > sstride[sorder[j]]; j--) {
      int t = sorder[j];
      sorder[j] = sorder[j - 1];
      sorder[j - 1] = t;
    }
  stage_run(p, dorder, n, dstride, 128 / size);
  stage_run(p, sorder, n, sstride, 128 / ssize);
  int total = 0;
  for (int i = 0; i < n; i++) total += p->stage_bits[i];
  for (int i = 0; i < n && total < 13; i++) /* grow to 8192 elements */
    while (total < 13 && ((int64_t)1 << p->stage_bits[dorder[i]]) <
                             p->axes[dorder[i]].extent) {
      p->stage_bits[dorder[i]]++;
      total++;
    }
  while (((int64_t)ssize << total) > 16384) { /* cut the largest block */
    int big = 0;
    for (int i = 1; i < n; i++)
      if (p->stage_bits[i] > p->stage_bits[big]) big = i;
    p->stage_bits[big]--;
    total--;
  }
}
/* A cast's box that transposes K's few rows (2 to 15: a 3 x 3 weight's 9
 * pixels, FRACTAL_Z -> NCHW) into P's rows, which follow one another in the
 * destination: 16 of P's rows are then one run of K vectors, shuffled from
 * K source vectors of 16 along P (kernels/lines_casts.cl rl_cast_mix).
 * K's extent, or 0. */
static int cast_planes(const rl_layout_plan *p) {
  const rl_box_axis *P = &p->box[0], *K = &p->box[2];
  if (P->axis < 0) return 0;
  const rl_iter_axis *a = &p->axes[P->axis], *k = &p->axes[K->axis];
  int short_k = K->block == k->extent && k->extent >= 2 && k->extent < 16;
  return short_k && a->sstride == 1 && k->sstride != 1 && P->block >= 16 &&
                 a->dstride == k->extent
             ? (int)k->extent
             : 0;
}

/* The other way (NCHW -> FRACTAL_Z or NHWC, a 3 x 3 weight's 9 pixels): P's
 * few elements (2 to 15) of each of K's rows one after another in the
 * source, K's rows following one another, so that 16 of them are P source
 * vectors, shuffled into 16 elements of each of P's rows
 * (kernels/lines_casts.cl rl_cast_split). Sets planes to P's extent and
 * split. */
static void cast_split(rl_layout_plan *p) {
  const rl_box_axis *P = &p->box[0], *K = &p->box[2];
  if (P->axis < 0 || p->planes || p->skip) return;
  const rl_iter_axis *a = &p->axes[P->axis], *k = &p->axes[K->axis];
  if (P->block == a->extent && a->extent >= 2 && a->extent < 16 &&
      a->sstride == 1 && k->sstride == a->extent && K->block >= 16) {
    p->planes = (int)a->extent;
    p->split = 1;
  }
}

/* A cast's box whose runs of K's short rows (Q continuing them in the
 * destination) go as squares of rows (kernels/lines_casts.cl RL_SQ): where
 * P's rows follow one another in the source (HWCN -> 2N: N's pairs), a
 * square takes 16 / K steps of P, so the box takes at least that many, Q
 * giving back the steps P takes more. Measured: bench/README.md, "Squares
 * of rows, and 16-bit lanes converted first". */
static void cast_square_rows(rl_layout_plan *p) {
  const rl_box_axis *P = &p->box[0], *Q = &p->box[1], *K = &p->box[2];
  if (P->axis < 0 || Q->axis < 0 || K->block < 1 || K->block >= 16 ||
      16 % K->block)
    return;
  const rl_iter_axis *a = &p->axes[P->axis], *k = &p->axes[K->axis];
  int64_t sq = 16 / K->block, q = Q->block * P->block / sq / sq * sq;
  if (K->block == k->extent && k->sstride == 1 &&
      p->axes[Q->axis].dstride == K->block && a->sstride == K->block &&
      P->block < sq && a->extent >= sq) {
    rl_box_block(p, 0, sq);
    rl_box_block(p, 1, q < sq ? sq : q);
  }
}

/* A cast's box where P's few elements of each pixel lie one after another
 * in the source, Q's pixels continuing them (or, where P's extent divides
 * 16, apart: CHWN4 -> 2N, read in pieces), and K's few rows are strided
 * there and continued by Q's steps in the destination (2N and 4N <-> NCHW4,
 * 2N and 4N <-> nChw8c; P x K at most 32): P and K whole, Q 2 KiB of data
 * in steps of 16 pixels,
 * whose K rows of P vectors each are shuffled into P runs of K vectors
 * (planes P's extent, weave K's: kernels/lines_casts.cl RL_CAST_WEAVE). */
static void cast_weave(rl_layout_plan *p, int ssize) {
  const rl_box_axis *P = &p->box[0], *Q = &p->box[1], *K = &p->box[2];
  if (P->axis < 0 || Q->axis < 0 || p->skip || p->planes) return;
  const rl_iter_axis *a = &p->axes[P->axis], *q = &p->axes[Q->axis],
                     *b = &p->axes[K->axis];
  if (a->sstride != 1 || a->extent < 2 || b->extent < 2 || b->sstride == 1 ||
      a->extent * b->extent > 32 || 16 % b->extent || a->check >= 0 ||
      b->check >= 0 || q->check >= 0 ||
      (q->sstride != a->extent && 16 % a->extent) || q->dstride != b->extent ||
      q->extent < 16)
    return;
  int64_t steps = 2048 / (a->extent * b->extent * ssize) / 16 * 16;
  rl_box_block(p, 0, a->extent);
  rl_box_block(p, 2, b->extent);
  rl_box_block(p, 1, steps < 16 ? 16 : steps);
  p->planes = (int)a->extent;
  p->weave = (int)b->extent;
}

void rl_plan_affine(rl_layout_plan *out, const rl_desc *dst, const rl_desc *src,
                    int keep) {
  memset(out, 0, sizeof *out);
  out->family = RL_FAMILY_GATHER;
  affine(out, dst, src, keep);
}

void rl_plan_layouts(rl_layout_plan *out, const rl_desc *dst,
                     const rl_desc *src, int for_cpu, int64_t stream_from) {
  rl_layout_plan p;
  rl_plan_affine(&p, dst, src, -1);
  /* per channel, where the channel dim merged with others into one axis
   * (NCHW -> NCHW along N: one run, each element's channel computed):
   * planned again with the channel dim's axes kept apart, so that a row
   * keeps to one channel or steps through them by its stride */
  int c = rl_is_cast(dst, src)
              ? (dst->per_channel ? dst->per_channel : src->per_channel) - 1
              : -1;
  for (int i = 0; c >= 0 && p.affine && i < p.naxes; i++)
    if ((p.axes[i].dims >> c & 1) && p.axes[i].dims != 1u << c) {
      rl_plan_affine(&p, dst, src, c);
      break;
    }
  int bits = relayout_dtype_bits(dst->dtype),
      sbits = relayout_dtype_bits(src->dtype);
  if (rl_is_cast(dst, src)) {
    /* a cast: on a CPU device through the lines family's box, planned for
     * the source's element, which converts 16 elements at a time
     * (kernels/lines_casts.cl); on a GPU, where the innermost axis of an
     * affine map does not run contiguous on both sides for 128 bytes,
     * through a stage box, else element by element (the gather family, as
     * 4-bit casts everywhere). Measured: bench/README.md, "Casts in CPU
     * boxes" and "Casts along runs". */
    const rl_iter_axis *inner = p.naxes ? &p.axes[p.naxes - 1] : NULL;
    int runs =
        !inner || (inner->sstride == 1 && !p.skip &&
                   inner->extent * (bits < sbits ? bits : sbits) >= 128 * 8);
    if (p.affine && bits >= 8 && sbits >= 8 && inner && for_cpu) {
      p.family = RL_FAMILY_LINES;
      rl_plan_box(&p, sbits / 8);
      /* per channel, Q alone moving the channel (a 1 x 1 conv weight's N into
       * FRACTAL_Z): P takes four times the rows, so that each Q step's
       * quantization, read and set up once, serves four times as many.
       * Measured: bench/README.md, "Taking a weight's pixels apart". */
      const rl_box_axis *P = &p.box[0], *Q = &p.box[1];
      if (c >= 0 && P->axis >= 0 && Q->axis >= 0 &&
          p.axes[Q->axis].dims == 1u << c && !(p.axes[P->axis].dims >> c & 1))
        rl_box_block(&p, 0, P->block * 4);
      /* K running on both sides (runs): cut to boxes of 4096 elements, so
       * that a tensor of one run spreads over the device's threads */
      if (runs && p.box[2].block > 4096) p.box[2].block = 4096;
      /* the casts' own squares, not these (K's few rows mixed where
       * cast_planes says); the prefetch of the Q step RL_AHEAD on (short
       * runs) kept; a destination past the cache
       * streamed where every row is whole vectors of 16 (K's block, where
       * rl_plan_box cuts it, whole lines: 16 elements or more) */
      p.vec = p.lead = 0;
      cast_square_rows(&p);
      p.planes = cast_planes(&p);
      cast_split(&p);
      cast_weave(&p, sbits / 8);
      p.cast_stream = !p.skip && p.axes[p.naxes - 1].extent % 16 == 0 &&
                      rl_too_big(dst, stream_from);
    } else if (p.affine && bits >= 8 && sbits >= 8 && !runs) {
      p.family = RL_FAMILY_STAGE;
      plan_stage(&p, bits / 8, sbits / 8);
    }
  } else if (p.affine && bits >= 8) {
    const rl_iter_axis *inner = p.naxes ? &p.axes[p.naxes - 1] : NULL;
    int checks = 0;
    for (int i = 0; i < p.naxes; i++) checks |= p.axes[i].check >= 0;
    if (!inner || (p.naxes == 1 && inner->sstride == 1 && !checks)) {
      p.family = RL_FAMILY_COPY;
    } else if (for_cpu) {
      rl_plan_lines(&p, dst, bits / 8, stream_from);
    } else {
      /* runs of 128 bytes or more on both sides: vector moves; otherwise
       * (a transpose, short runs, or a skip plan, whose innermost axis may
       * run past the destination's rows: NCHW32 -> ...C with C = 33) through
       * local memory */
      p.vec = 1;
      if (inner->sstride == 1 && inner->extent * bits >= 128 * 8 && !p.skip)
        while (p.vec < 16 && (p.vec * 2) * bits <= 128 &&
               inner->extent % (p.vec * 2) == 0)
          p.vec *= 2;
      p.family = p.vec > 1 ? RL_FAMILY_ROWS : RL_FAMILY_STAGE;
      if (p.vec == 1) plan_stage(&p, bits / 8, bits / 8);
    }
  } else if (p.affine && for_cpu && p.naxes && !p.skip &&
             p.axes[p.naxes - 1].dstride == 1) {
    rl_plan_nibbles(&p, dst, stream_from);
  }
  p.cpu = for_cpu;
  *out = p;
}
