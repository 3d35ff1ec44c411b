/* plan_lines.c - the planner's CPU family: a box of whole destination rows
 * per work-item, its squares and its stores
 *
 * Each rule below carries the measurements that chose it (alternating runs
 * in one process; bench/TUNING.md has the tables).
 */
#include "plan_lines.h"

/* Settles how box axis b (P or Q) meets a later box axis bounding the same
 * dim: with K, when b's weight is a multiple of K's, K's data count drops
 * by a fixed step along b; otherwise b leaves the box (axis -1). */
static void settle_check(rl_layout_plan *p, int b) {
  if (p->box[b].axis < 0) return;
  const rl_iter_axis *a = &p->axes[p->box[b].axis];
  if (a->check < 0) return;
  for (int c = b + 1; c < 3; c++) {
    if (p->box[c].axis < 0) continue;
    const rl_iter_axis *x = &p->axes[p->box[c].axis];
    if (x->check != a->check) continue;
    if (c == 2 && a->weight % x->weight == 0)
      p->box[b].step = a->weight / x->weight;
    else
      p->box[b].axis = -1;
    return;
  }
}

void rl_box_block(rl_layout_plan *p, int b, int64_t want) {
  if (p->box[b].axis < 0) return;
  int64_t e = p->axes[p->box[b].axis].extent;
  p->box[b].block = want < 1 ? 1 : want < e ? want : e;
  if (p->box[b].block == 1) p->box[b].axis = -1;
}

/* Whether Q continues K's rows in the destination: its stride there is K's
 * block (nChw8c -> nChw16c: the two 8-channel halves of a 16-channel row;
 * FRACTAL_NZ: M, the next 16-element row of the fractal). */
static int continues_rows(const rl_layout_plan *p) {
  const rl_box_axis *q = &p->box[1];
  return q->axis >= 0 && p->axes[q->axis].dstride == p->box[2].block;
}

/* Whether each step along Q reads one contiguous source run shorter than
 * a line per row: P whole, under a line, and K's rows following one another
 * in the source (FRACTAL_Z from a 3x3 kernel's weights: 16 rows of 9
 * elements, 576 contiguous bytes of f32, the next Q step's 72 KiB on at
 * 2048 input channels). The box then takes 16 KiB of such steps instead of
 * 2 KiB, and prefetches each step's run two steps ahead (kernels/relayout.cl
 * rl_box_squares). Alternating runs in one process on the 2-core machine,
 * median GB/s before and after: NCHW -> FRACTAL_Z f32 2048x2048x3x3 11.6
 * and 13.4 (copy kernel 21.5), 512x512x3x3 22.8 and 27.8, 256x256x3x3
 * 21.5 and 25.0; f16 the same before and after (512x512x3x3 24.5 and
 * 24.7). Not for runs of a line or more: f64 1024x1024x3x3 (72-byte rows)
 * gained 7%, f32 1024x1024x5x5 (100-byte rows) lost 5%. */
static int short_runs(const rl_layout_plan *p, int size) {
  const rl_box_axis *P = &p->box[0], *Q = &p->box[1];
  if (P->axis < 0 || Q->axis < 0) return 0;
  const rl_iter_axis *a = &p->axes[P->axis];
  return P->block == a->extent && a->extent * size < 64 &&
         p->axes[p->box[2].axis].sstride == a->extent;
}

/* Whether Q continues P's run in the source, P whole and at most 36 bytes
 * (NCHW -> HWCN of 3x3 weights: P the 9 pixels, Q the input channels, K
 * the output channels, their rows C x 9 elements apart in the source). The
 * box then takes 8 steps of Q, so that each of K's rows reads 8 of P's
 * runs in one, and K is cut to 16 rows. Before, the box took all of K (up
 * to 1024 rows) by one step of Q: of each source line it read 9 elements,
 * and the boxes after it along Q read the rest from further out. Both
 * plans in one process, alternating, median GB/s before and after: NCHW ->
 * HWCN 2048x2048x3x3 int8 1.35 and 4.00, f16 1.74 and 3.90, f32 3.51 and
 * 5.94; 1024x512x3x3 int8 5.52 and 7.61, f16 5.57 and 8.34, f32 6.79 and
 * 8.06; 1024x512x5x5 int8 6.05 and 7.63 (512x512x5x5 0.96-1.03x);
 * 256x256x3x3 int8 5.62 and 8.26, f16 10.15 and 13.22, f32 8.51 and 6.87
 * (2.4 MB). Longer runs of P lost: 5x5 f16 0.83-0.88x, 7x7 int8 0.50x;
 * 3x3 f64 and 7x7 f16 and f32 read alike. */
static int pixel_runs(const rl_layout_plan *p, int size) {
  const rl_box_axis *P = &p->box[0], *Q = &p->box[1];
  if (P->axis < 0 || Q->axis < 0) return 0;
  const rl_iter_axis *a = &p->axes[P->axis];
  return P->block == a->extent && a->extent * size <= 36 &&
         p->axes[Q->axis].sstride == a->extent * a->sstride;
}

/* CPU devices: each work-item writes a box of whole destination rows. K is
 * the innermost axis.
 * - K strided in the source: the box is a transpose. P is the axis the
 *   source runs along, a cache line of it or more (below), and K is cut to
 *   a few lines' worth, so that the strided reads along K fetch lines that
 *   the next steps along P read from the cache; Q, K's outer neighbour,
 *   fills the box up to 2 KiB (16 KiB where each Q step reads one short
 *   run: short_runs), or to a line of each destination row. Where P
 * and K allow, the box moves as squares transposed in registers (vec: their
 * side).
 * - K contiguous in the source: P is the axis continuing K's source run
 *   (FRACTAL_NZ's N1, nChw8c's hw). Where Q continues K's rows in the
 *   destination, the box takes 512 bytes of those rows (all of Q when it
 *   is shorter) and P fills the box to 2 KiB: each P step then writes
 *   whole lines, which can stream (stream_stores). Work-items step along P
 *   first, so that consecutive ones continue the same source runs. Before,
 *   a FRACTAL_NZ box took 2 KiB of one source row and wrote half of each
 *   of 64 lines, the other halves 8 work-items later; with 4096 rows, its
 *   runs 128 KiB apart crowded into few cache sets (ND -> FRACTAL_NZ f16,
 *   alternating runs, ratio to copy: 4096x11008 0.34-0.51 before, 1.6-1.9
 *   after; 8197x8195 0.53-0.76 before, 1.1-1.4 after). Without such a Q,
 *   P takes 2 KiB of one source run; without a P, Q takes 2 KiB of rows. */
void rl_plan_box(rl_layout_plan *p, int size) {
  int n = p->naxes, line = 64 / size; /* elements per cache line */
  const rl_iter_axis *k = &p->axes[n - 1];
  int strided = k->sstride != 1, P = -1;
  for (int i = 0; i + 1 < n; i++)
    if (p->axes[i].extent > 1 &&
        p->axes[i].sstride == (strided ? 1 : k->extent))
      P = i;
  /* Q: K's outer neighbour in the destination. Where that is P (FRACTAL_Z
   * -> NCHW: C0, P, lies between the rows of pixels, K, in the
   * destination), the axis that continues P's run in the source (N)
   * instead, taking 1 KiB of each source row with P. Before, such a box
   * was one C0 block by one kernel's pixels, and FRACTAL_Z -> NCHW ran at
   * 0.27-0.36 of copy. Alternating in one process, 2 rounds, new/old:
   * 2048x2048x3x3 f32 1.17-1.26, f16 1.38-1.40, int8 1.14-1.47, f64
   * 1.10-1.16; 512x512x3x3 f32 1.73-1.97; 256x1024x14x14 f32 1.55-1.60;
   * 512x2048x7x7 f32 1.56-1.78; 64x256x56x56 f32 1.14-1.23, f16
   * 1.76-1.86. A Q block of 4, 16 or 28 steps measured alike for f32;
   * 16 and 32 for f16, 16 and 64 for int8. */
  int Q = n >= 2 && n - 2 != P ? n - 2 : -1, q_runs = 0;
  for (int i = 0; P >= 0 && n - 2 == P && i + 1 < n; i++)
    if (i != P && p->axes[i].extent > 1 &&
        p->axes[i].sstride == p->axes[P].extent * p->axes[P].sstride)
      Q = i, q_runs = 1;
  p->box[0] = (rl_box_axis){P, 1, 0};
  p->box[1] = (rl_box_axis){Q, 1, 0};
  p->box[2] = (rl_box_axis){n - 1, k->extent, 0};
  /* K's strided reads touch one line per element: 16 lines, or 4 when the
   * stride is a multiple of 1 KiB and the lines crowd into few cache sets */
  int64_t cut = (k->sstride * size) % 1024 ? 16 * line : 4 * line;
  if (strided && k->extent > cut) p->box[2].block = cut;
  for (int b = 0; b < 2; b++) settle_check(p, b);
  int64_t row = p->box[2].block * size, rows = (2048 + row - 1) / row;
  if (strided) {
    /* P's run in bytes: a cache line; with Q in the box, where a thread
     * steps through all of Q's source runs before P moves on (CHWN4's N),
     * 1 KiB at a time (K's rows up to 16 KiB), long enough for the hardware
     * prefetcher to follow each run. Without Q, where K's source rows
     * follow one another and are 512 bytes to 1 KiB of 4- or 8-byte
     * elements (NHWC -> NCHW with 128 or 256 channels of f32), the whole
     * row: the box then reads one contiguous run. That needs the box to
     * stay within 128 KiB and its rows to lie apart in the destination
     * (NCHW -> NC1HWC0 at 14x14, whose box rows follow one another, ran
     * 3-6% slower). Alternating in one process, whole rows against a line,
     * median GB/s ratio per round: NHWC -> NCHW f32 64x56x56x256 1.17-1.38
     * (12 rounds), 64x57x57x128 1.10-1.22 (4), 32x112x112x128 1.13-1.15,
     * 256x28x28x256 0.97-1.11 (5), 512x14x14x256 0.97-1.02 (5); f64
     * 64x112x112x64 1.12-1.24 (4), 64x57x57x128 0.99-1.02, 64x35x35x96
     * 1.00-1.04. f16 and int8 rows, and f32 rows of 256 or 384 bytes,
     * ran alike or slower (f16 64x56x56x256 0.87-1.18 over 6 rounds, f32
     * 64x112x112x64 0.91-0.97). */
    int64_t run = 64, whole = P >= 0 ? p->axes[P].extent * size : 0;
    if (p->box[1].axis >= 0) {
      run = 16384 / (p->box[2].block * size);
      run = run < 64 ? 64 : run > 1024 ? 1024 : run;
    } else if (size >= 4 && whole >= 512 && whole <= 1024 &&
               p->axes[P].extent == k->sstride &&
               whole * p->box[2].block <= 131072 &&
               p->axes[P].dstride != p->box[2].block)
      run = whole;
    rl_box_block(p, 0, run / size);
    /* Q: the rest of 2 KiB of rows, and where Q continues K's rows in the
     * destination (CHWN4's N), at least a line of them, so that one
     * work-item writes each line whole (NCHW -> CHWN4 64x256x56x56,
     * alternating runs, ratio to copy: int8 0.29-0.32 before, when Q was
     * 1 and 16 work-items shared each line, 0.34-0.46 after; f16
     * 0.25-0.31, 0.35-0.43; f32 0.35-0.48, 0.51-0.55) */
    int64_t q = rows / p->box[0].block;
    if (q_runs) /* P x Q: 1 KiB of each source row */
      q = 1024 / (p->box[0].block * size);
    if (continues_rows(p) && q * row < 64) q = (64 + row - 1) / row;
    if (short_runs(p, size)) {
      q = 16384 / row / p->box[0].block;
      p->ahead = 2;
    }
    if (!q_runs && pixel_runs(p, size)) {
      q = 8;
      if (p->box[2].block > 16) p->box[2].block = 16;
    }
    rl_box_block(p, 1, q);
    /* squares transposed in registers: rows of up to 16 bytes (wider
     * rows measured slower on PoCL), sides 2 to 8 */
    for (int v = 8; v >= 2 && p->box[0].axis >= 0; v /= 2)
      if (v * size <= 16 && v <= p->box[0].block && v <= p->box[2].block) {
        p->vec = v;
        break;
      }
    /* rows off the line grid, longer than a box and 3 lines: each box
     * asks for its rows' lines 3 lines on along P (lead). A box there
     * reads 2 lines of each row, the second shared with the next box, and
     * such transposes ran at about 0.6 of copy where rows on the grid ran
     * at copy speed (NCHW -> NHWC f32 64x256, median GB/s against the copy
     * kernel: 60x60 19.2 of 19.6, 58x58 11.4 of 20.4, 57x57 12.2 of 20.6);
     * from the cache (2x256) 58x58 and 60x60 ran alike. The prefetch,
     * alternating in one process over 2-3 rounds, gained f32 6-40% at
     * 57x57, 58x58, 73x73, 147x147 and 35x35, f16 57x57 5-15%; int8 and
     * rows on the grid (56x56) ran alike with it, and so did 14x14 and
     * 7x7, whose rows are a few boxes long; 1 line on gained less, 6 and
     * 12 lines less again (bench/TUNING.md) */
    if (p->vec > 1 && p->box[1].axis < 0 && k->sstride * size % 64 &&
        p->axes[p->box[0].axis].extent > p->box[0].block + 3 * line)
      p->lead = 3 * line;
  } else if (p->box[0].axis >= 0 && continues_rows(p)) {
    rl_box_block(p, 1, (512 + row - 1) / row);
    rl_box_block(p, 0, rows / p->box[1].block);
    p->p_first = 1;
  } else if (p->box[0].axis >= 0) {
    rl_box_block(p, 0, rows);
    p->box[1].axis = -1;
  } else {
    rl_box_block(p, 1, rows);
  }
}

/* CPU devices, squares with rows of 8 or 16 bytes: a square writes one
 * piece of each of its rows, the rest of each row's line coming from other
 * squares later along K, so the lines of all its rows stay open. Where K's
 * block and extent allow, the box moves squares side by side along K at
 * once (kernels/relayout.cl RL_GROUP): reads and transposes them all, then
 * writes each row's pieces one after another. 4 squares of 4-byte elements
 * write whole lines, in 16 vector registers; squares 8 rows tall (2-byte
 * elements) or 16 (1-byte, plan_bytes16) and tiles (each row put together
 * from 4 pieces) go 2 at a time (4 squares of f16 spilled: NCHW -> NC1HWC0
 * f16 39.7 GB/s one at a time, 29.2 as 4). Alternating runs in one process
 * on the 2-core machine, three rounds, median GB/s one at a time and
 * grouped (bench/TUNING.md): NHWC -> NCHW 64x56x56x256 f32 18.5/19.3,
 * 23.1/25.4, 22.4/25.8; int8 (tiles) 18.5/22.7, 22.6/23.4, 24.5/26.2;
 * NCHW -> FRACTAL_Z 512x512x3x3 f32 28.4/34.2, 24.1/27.9, 23.8/27.9; f16
 * 30.1/31.3, 30.0/33.4, 28.3/30.2. NCHW -> NHWC at every width, NC1HWC0 and
 * nChw16c f32 and f16, FRACTAL_Z 2048x2048x3x3 f32: -2% to +16%, lower in 1
 * round of 27. Squares of 8-byte rows (1-byte elements) go 2 at a time only
 * where that writes each row whole: NCHW -> nChw16c int8 27.0/30.1,
 * 24.2/26.3, 27.3/29.5, NCHW -> NHWC 64x16x112x112 int8 39.5/48.3,
 * 48.5/54.5, 24.3/28.3; NC1HWC0 int8's rows of 32 bytes, half written, went
 * from 27 to 24. The group of the plan as it stands: stream_stores asks
 * with the squares as planned so far (tiles, wide squares and spans come
 * later, only to plans that do not stream yet; plan_bytes16 and plan_tiles
 * ask again for their squares), the planner at the end. */
static int squares_group(const rl_layout_plan *p, int size) {
  if (p->vec < 2 || p->wide || p->span || p->flat || p->copy_in) return 1;
  const rl_box_axis *K = &p->box[2];
  int side = p->tile ? p->tile : p->vec, row = p->tile ? 16 : p->vec * size,
      g = 1;
  if (row == 16)
    g = p->tile || p->vec > 4 ? 2 : 4;
  else if (row == 8 && K->block == 2 * side)
    g = 2; /* each row written whole */
  while (g > 1 &&
         (K->block % (g * side) || p->axes[K->axis].extent % (g * side)))
    g /= 2;
  return g;
}

/* CPU devices, plain squares (of elements, one step along Q) whose K's
 * block is whole squares: whether the rows along P past the last square
 * go as vectors, each gathered from K's rows, rather than element by
 * element. Where the box streams, so that those rows stream too (NCHW ->
 * FRACTAL_Z f32 512x512x3x3, 9 rows along P: 4% to 17% faster in 6 of 7
 * A/B rounds on the first development machine, one 5% slower); and for
 * 4-byte elements in boxes of short runs (short_runs: FRACTAL_Z from 3x3
 * or 5x5 weights, the 9th or 25th pixel), streamed or not. Those,
 * alternating in one process on the Zen 4 machine, median GB/s as
 * vectors against element by element, 2 or 3 rounds: NCHW ->
 * FRACTAL_Z f32 512x512x3x3 1.05-1.08x, 256x256x3x3 1.05-1.23x,
 * 256x256x5x5 1.00-1.09x, 128x128x3x3 1.02-1.13x; f16 0.93-1.01x and
 * int8 0.95-1.05x, which stay element by element (bench/TUNING.md). */
static int square_tail(const rl_layout_plan *p, int size) {
  return p->vec > 1 && !p->tile && !p->wide && !p->span && !p->flat &&
         !p->copy_in && (p->stream || (p->ahead && size == 4));
}

int rl_too_big(const relayout_desc *dst, int64_t stream_from) {
  int64_t bytes;
  return stream_from > 0 && !relayout_desc_size_bytes(&bytes, dst, NULL) &&
         bytes >= stream_from;
}

/* CPU devices: the elements per non-temporal store a box writes with (0:
 * plain stores only). Such a store sends its line to memory without first
 * reading it into the cache (on the 2-core development machine's PoCL, a
 * copy kernel with them moves 1.4x the bytes per second). The rule, from
 * A/B runs there (bench/TUNING.md):
 * - the destination is too big for the cache (stream_from);
 * - squares, one row per store: one square keeps at most 4 lines open at a
 *   time (8 open lines, as f16 and int8 squares 8 rows tall with rows a
 *   line or more apart write, fell to a fifth of their speed; plan_tiles
 *   makes such squares 4 rows tall where it can; a group that writes its
 *   rows whole, one after another, keeps one open: plan_bytes16), and the
 *   box writes runs of 1 KiB or more, or of 256 bytes or more (tiles: any
 *   multiple of a line) whose starts are not a multiple of 4 KiB apart
 *   (FRACTAL_Z's 192-byte runs 128 KiB apart, and NHWC -> NCHW's 256-byte
 *   runs 16 KiB apart at 64x64 pixels, lost speed; 12.5 KB apart at 56x56
 *   they gained);
 * - no two rows a square writes at once are a multiple of 4 KiB apart
 *   (likely 4 KiB aliasing: the core tells pending accesses apart by their
 *   low 12 address bits first). NCHW -> NHWC f32 with 512 channels and
 *   more (rows 2 KiB apart) ran at half its speed streamed
 *   (128x512x28x28: 7.0-7.8 GB/s, 16.4-17.2 with plain stores;
 *   256x2048x7x7: 6.0-6.5 and 11.9-12.5), int8 tiles at 7x7x2048 at a
 *   quarter. Except a box of short runs (short_runs) whose groups of
 *   squares write each row's line whole, one line after another along Q
 *   (FRACTAL_Z from 3x3 f32 weights: 9 rows a multiple of 4 KiB apart
 *   where N is a multiple of 64): NCHW -> FRACTAL_Z f32 2048x2048x3x3
 *   and 1024x1024x3x3 streamed read 1% to 23% faster in 4 of 5 rounds
 *   each, the fifth mixed (bench/TUNING.md, "Short runs streamed").
 *   NCHW -> NHWC f32, whose groups write whole lines too but in runs
 *   along K, measured -6% to -14% streamed at 512 channels, +7% to +12%
 *   at 2048, and stays plain.
 * - a square that writes its rows a 16-byte piece at a time (no group: K's
 *   extent holds no 2 squares' worth) streams only where its rows start
 *   on the line grid or lie less than 4 lines apart. Otherwise each row's
 *   run in a box begins and ends in lines that other boxes, or this one
 *   much later, finish, and such partial lines went to memory piece by
 *   piece. Conversions into NCHW of 14x14, 18x18 and 30x30 pixels (rows
 *   784, 1296 and 3600 bytes apart at f32) ran at 5-7 GB/s streamed and
 *   10-14 with plain stores; alternating in one process, 2 rounds each,
 *   new/old: from NHWC f32 1.69-2.23x, int8 (28x28) 1.19-1.29x; from
 *   NC1HWC0 f32 1.71-2.16x, int8 0.83-1.11x (4 rounds); from nChw16c f32
 *   1.67-2.24x, int8 1.14-1.16x; from nChw8c f32 2.06-2.37x, int8
 *   1.45-1.62x; NCHW -> NHWC int8 with 400 channels 0.96-1.16x (4
 *   rounds). Rows closer (NCHW -> NHWC int8, 112 and 208 channels) ran
 *   5-25% slower plain, and so did groups of 2, which write 32 bytes of a
 *   row one after another (NHWC -> NCHW f32 at 10x20 and 20x22 pixels,
 *   f64 at 14x14 and 18x18: 13-27%);
 * - rows contiguous in the source, 16 bytes per store: K's block is whole
 *   stores, and the box writes runs of whole lines, 64 bytes or more (one
 *   run at a time: FRACTAL_NZ's runs 128 KiB apart gained too);
 * - the stores stay aligned when the box's start is: P's and Q's
 *   destination strides are multiples of the store (the kernel checks each
 *   box's start, and writes a misaligned box with plain stores). */
static int stream_stores(const rl_layout_plan *p, const relayout_desc *dst,
                         int size, int64_t stream_from) {
  int64_t run = p->box[2].block, apart = 0;
  if (!rl_too_big(dst, stream_from)) return 0;
  for (int b = 1; b >= 0 && !apart; b--) /* Q, then P, continue the run */
    if (p->box[b].axis >= 0) {
      int64_t stride = p->axes[p->box[b].axis].dstride;
      if (stride == run)
        run *= p->box[b].block;
      else
        apart = stride * size;
    }
  int width = p->vec; /* rows of a square, then elements per store */
  if (width > 1) {
    int64_t spacing = p->axes[p->box[0].axis].dstride * size; /* its rows */
    int lines = p->tile && p->box[2].block * size % 64 == 0;
    /* the bytes of each row a group writes; lines open at once: one where
     * that is the whole row and the rows follow one another */
    int64_t row = squares_group(p, size) * (p->tile ? 16 : width * size),
            open = row == spacing  ? 1
                   : spacing >= 64 ? width
                                   : (width * spacing + 63) / 64;
    if (open > 4 || (run * size < 1024 &&
                     ((run * size < 256 && !lines) || apart % 4096 == 0)))
      return 0;
    if (row <= 16 && spacing >= 256 && spacing % 64) return 0;
    int whole = p->ahead && row == 64;
    for (int j = 1; j < width && !whole; j++)
      if (j * spacing % 4096 == 0) return 0;
    if (p->tile) width = p->tile;
  } else {
    width = 16 / size;
    if (p->axes[p->box[2].axis].sstride != 1 || p->box[2].block % width ||
        run * size < 64)
      return 0;
  }
  for (int b = 0; b < 2; b++)
    if (p->box[b].axis >= 0 && p->axes[p->box[b].axis].dstride % width)
      return 0;
  return width;
}

/* The first-level cache sets (of 64, 8 ways each) that lines `stride`
 * bytes apart fall into. */
static int64_t cache_sets(int64_t stride) {
  if (stride % 64) return 64;
  int64_t a = 64, b = stride / 64 % 64;
  while (b) { /* gcd(stride / 64, 64) */
    int64_t r = a % b;
    a = b;
    b = r;
  }
  return 64 / a;
}

/* CPU devices, 1- and 2-byte elements: squares 8 rows tall keep 8
 * destination lines open, too many to stream. Tiles 4 rows tall and 16
 * bytes wide keep 4 open and stream; each reads a 4-element piece of each
 * of 16 bytes' worth of source rows (kernels/relayout.cl rl_square_row),
 * so it touches each source line twice as often as a square, and the
 * source lines of K's block must stay in the first-level cache: at most
 * 8 rows per cache set they fall into (cache_sets). So:
 * - where the box's rows follow one another in the destination (NCHW ->
 *   NHWC: P's destination stride is K's block) and K's lines fit, K's
 *   block as planned (NCHW -> NHWC 64x512x28x28 int8: 8.9 GB/s as
 *   squares, 14.6 as tiles; f16 11.6 and 19.2; a cap of 256 rows, first
 *   tried, had kept these squares);
 * - where they lie apart (NHWC -> NCHW), or K's lines do not fit, K's
 *   block cut to those rows; the box's rows, a multiple of a line long,
 *   stream however short (stream_stores). A block cut to one line
 *   instead gained at 56x56 and lost 30% at 60x60x128 int8, whose lines
 *   spread over twice the sets;
 * - never where K's source stride is a multiple of 1 KiB (NCHW -> NHWC
 *   int8 at 64x64 pixels fell from 9.3 to 4.7 GB/s as tiles, NHWC -> NCHW
 *   f16 28x28x512 from 19.3 to 16.5 with K cut to 32 rows).
 * Alternating runs in one process on the 2-core machine, median GB/s
 * before and as tiles (bench/TUNING.md): NCHW -> NHWC 64x256x56x56 int8
 * 14.5-16.2 and 19.0-20.3, f16 19.7-21.0 and 25.7-27.2; NHWC -> NCHW
 * 64x56x56x256 int8 11.5-11.7 and 18.6-18.7, f16 14.7 and 20.1-21.1.
 * Where squares stream already (NC1HWC0 int8: 15 as squares, 11 as
 * tiles), they stay. 1-byte tiles whose K block's source rows span over
 * 128 pages of 4 KiB per step along P (a 4-byte piece of each) take 64
 * rows instead, one line of each destination row: alternating in one
 * process, median GB/s as planned and cut, NCHW -> NHWC int8 with 256
 * channels at 56x56 (196 pages) 17.5-18.0 and 20.5-21.1, 57x57 (203)
 * 13.5-15.8 and 16.9-19.2, 60x60 (225) 7.9-8.4 and 9.1-10.2, 72x72 (324)
 * 9.4-12.7 and 9.7-14.8; at 128 pages or fewer (112x112x128, 48x48x256,
 * 40x40x256, 28x28x512, 14x14x1024, NHWC -> NCHW) a cut ran alike or
 * lower, down to 0.6x, and so did f16 tiles cut to a line at 56x56
 * (bench/TUNING.md). */
static void plan_tiles(rl_layout_plan *p, const relayout_desc *dst, int size,
                       int64_t stream_from) {
  const rl_box_axis *P = &p->box[0], *K = &p->box[2];
  int64_t stride = p->axes[K->axis].sstride * size;
  if (size > 2 || p->vec < 4 || p->stream || K->block * size < 64 ||
      stride % 1024 == 0)
    return;
  int64_t fit = 8 * cache_sets(stride);
  rl_layout_plan t = *p;
  if (K->block > fit || p->axes[P->axis].dstride != K->block) {
    if (fit * size < 64) return;
    t.box[2].block = fit < K->block ? fit : K->block;
  }
  /* 1-byte tiles whose K rows span over 128 pages: a line of each row */
  int64_t page = stride < 4096 ? stride : 4096;
  if (size == 1 && t.box[2].block * page > 128 * 4096) t.box[2].block = 64;
  t.vec = 4;
  t.tile = 16 / size;
  t.stream = stream_stores(&t, dst, size, stream_from);
  if (t.stream) *p = t;
}

/* CPU devices, 1-byte elements: squares of 16 x 16 bytes instead of 8 x 8,
 * where a group of them writes each row whole and the rows follow one
 * another, so that they stream one line at a time (rows of 32 bytes,
 * NCHW -> NC1HWC0 int8: 2 squares side by side; of 16, nChw16c: 1). A
 * square is 16 loads and 16 non-temporal stores of 16 bytes and 4 rounds
 * of interleaving; 8 x 8 squares move the same bytes in 4 times as many
 * 8-byte loads and stores, each store from a general register.
 * Alternating runs in one process on the 2-core machine, median GB/s
 * before and after, copy kernel in brackets (bench/TUNING.md): NCHW ->
 * NC1HWC0 int8 64x256x56x56 16.8 and 21.6 (21.5), 15.7 and 21.1 (19.3),
 * 17.9 and 23.7 (21.2); NCHW -> NHWC int8 64x32x112x112 12.0 and 21.1
 * (22.4), 15.3 and 23.8 (24.8), 10.6 and 18.2 (15.8). Alike: nChw16c
 * int8, and NC1HWC0 int8 at 28x28 and 14x14, whose rows are off the line
 * grid. Where the group writes part of each row (NCHW -> NHWC at 256
 * channels, 2 squares of 32 bytes), streaming them ran at half the
 * speed of tiles; 4 squares ran alike, spilling registers. */
static void plan_bytes16(rl_layout_plan *p, const relayout_desc *dst, int size,
                         int64_t stream_from) {
  const rl_box_axis *P = &p->box[0], *K = &p->box[2];
  if (size != 1 || p->vec != 8 || p->ahead || P->block < 16 ||
      p->axes[P->axis].dstride != K->block)
    return;
  rl_layout_plan t = *p;
  t.vec = 16;
  if (squares_group(&t, size) * 16 != K->block) return;
  t.stream = stream_stores(&t, dst, size, stream_from);
  if (t.stream) *p = t;
}

/* CPU devices, 1-byte elements with K's block 4 (NCHW -> 4N, NCHW4): each
 * row of a 4 x 4 square is one 4-byte store. Where P's destination rows
 * follow one another, the square grows to 16 bytes along P, whose 4 rows
 * after the transpose are 16 contiguous bytes each (kernels/relayout.cl
 * rl_square_row): a quarter of the loads and stores. Alternating runs in
 * one process on the 2-core machine, median GB/s before and after
 * (bench/TUNING.md): NCHW -> 4N int8 64x256x56x56 11.5-12.0 and
 * 13.4-14.0, NCHW -> NCHW4 9.8-9.9 and 11.7-11.8. Non-temporal stores on
 * top measured within the noise. Where N or C is not padded, plan_planes
 * now replaces them (1.3-1.5x faster). */
static void plan_wide(rl_layout_plan *p, int size) {
  const rl_box_axis *P = &p->box[0], *K = &p->box[2];
  if (size == 1 && p->vec == 4 && !p->stream && K->block == 4 &&
      p->axes[P->axis].dstride == 4 && P->block >= 16)
    p->wide = 1;
}

/* CPU devices, 1- and 2-byte elements whose K is one block under 16 bytes
 * (NCHW -> CHWN4: 4 channels) with Q continuing K's rows in the
 * destination (CHWN4's N): a square's rows are 4 or 8 bytes, one load and
 * one store each. A tile takes 16 bytes of rows instead, K's block at 2 or
 * 4 steps along Q (kernels/relayout.cl RL_ROW), so each row it writes is 16
 * contiguous bytes: a quarter of the stores, 4-byte loads as before. The
 * box keeps its shape: 1 KiB runs along P read one Q step after another
 * measured faster than whole lines written in turn (P 64 to 512 bytes,
 * alone or with Q 64, or 1 KiB walked a line at a time through all of Q:
 * 0.4-0.9x of these). Alternating runs in one process on the 2-core
 * machine, median GB/s before and after (bench/TUNING.md): NCHW -> CHWN4
 * 64x256x56x56 int8 6.2-6.3 and 10.1-10.2 (copy kernel 17.6), f16 6.2-7.8
 * and 8.1-9.9, 128x128x28x28 int8 4.4-4.8 and 5.9-6.5; NHWC -> 4N int8
 * 1.9-2.0 and 5.7-6.2. Nor did 4 tiles side by side along Q, each
 * destination line written whole, streamed or not, beat it (12.1-12.2
 * against 12.0-12.5): at 64x256x56x56 N's source rows are a multiple of
 * 4 KiB apart, and the 16 a line needs crowd one cache set (plan_staged
 * does, for destinations larger than the cache). Not with the prefetch
 * (short_runs), which works one Q step at a time. */
static void plan_span(rl_layout_plan *p, int size) {
  const rl_box_axis *Q = &p->box[1], *K = &p->box[2];
  int64_t row = K->block * size;
  if (size > 2 || p->vec < 4 || p->tile || p->wide || p->stream || p->ahead ||
      !continues_rows(p) || K->block != p->axes[K->axis].extent || row >= 16 ||
      16 % row || Q->block < 16 / row)
    return;
  p->vec = 4;
  p->tile = 16 / size;
  p->span = (int)(16 / row);
}

/* CPU devices, squares whose K is whole in each box but not whole squares
 * (HWCN -> NCHW, HWIO -> OIHW weights: K the 9, 25 or 49 pixels of each
 * kernel, Q the input channels, continuing K's rows in the destination, P
 * the output channels). The box's rows, one run per element along P, move
 * as squares of consecutive rows wherever along Q they fall (flat), and
 * each square first prefetches the rows 2 squares on: they lie a Q or K
 * step apart in the source, a walk the core's prefetchers do not follow.
 * P takes 16 squares, Q enough steps that each run is whole lines. Before,
 * squares took K's first rows at each Q step and the rest of K went
 * element by element, in boxes of up to 1 KiB along P by few Q steps,
 * whose runs of 9 bytes left each line to several boxes. Both plans in
 * one process, alternating, median GB/s new/old over 3 rounds (HWCN shape
 * order H x W x C x N): 3x3x512x1024 int8 1.89-2.27x, f16 1.67-1.86x, f32
 * 1.23-1.51x; 3x3x2048x2048 int8 1.50-1.60x, f16 1.87-2.09x, f32
 * 1.04-1.12x; 5x5x256x512 int8 1.69-1.80x, f16 1.62-2.44x, f32
 * 1.03-1.23x; 7x7x128x256 int8 2.67-2.97x, f16 2.86-3.38x, f32
 * 1.38-1.99x; 7x7x512x64 int8 2.24-2.68x; 1x7x256x256 f32 1.38-1.41x.
 * Squares of 2 (f64) read 0.69-1.09x, and keep the plan before.
 * Narrow: K's block under a square's 16 bytes, 1- and 2-byte elements,
 * where tiles do not take it (into 2N and 4N from FRACTAL_Z, NHWC,
 * NC1HWC0 and the channel-blocked formats; HWCN -> NCHW4 and nChw8c): the
 * same, squares of 16 bytes (16 x 16 bytes, 8 x 8 halves) across Q, each
 * row written 16 bytes at a time where squares of K's width wrote 2 or 4,
 * in boxes of up to 16 KiB. Not where more than an eighth of the rows fall
 * short of a square (NCHW -> CHWN4 with N = 3: 12 rows). Alternating
 * runs on the Zen 4 machine, 3 rounds, new/old (bench/TUNING.md, "Narrow
 * K across Q"): 32x256x28x28 int8 1.2x-4.6x (HWCN -> NCHW4 3.2-3.4x,
 * NCHW64 -> 2N 4.0-4.6x), f16 1.0x-1.9x, FRACTAL_Z -> 4N and 2N f16
 * 11-23x (from 1.4-2.7 GB/s); 64x256x56x56 int8 1.3x-2.3x, FRACTAL_Z ->
 * 4N 10-11x, f16 0.88x-1.5x, FRACTAL_Z 6.5-13x; 1024x512x3x3 int8 into 2N
 * 2.6x-3.4x, FRACTAL_Z -> 4N 0.71x-1.11x, f16 0.76x-1.41x.
 * 4-byte elements take it too, squares of 4, where the plan does not
 * stream: f32 into 2N, and int8 CHWN4 -> nChw8c, moved as 4-byte units (a
 * pixel's 4 channels; 2 of them a destination pixel), whose 2x2 squares
 * read 8.6 GB/s in the i8 sweep. 68 plans change over 9 shapes x 780 pairs
 * x 5 dtypes; alternating runs on the Zen 4 machine, new/old
 * (bench/TUNING.md, "Narrow K of 4-byte units"): CHWN4 -> nChw8c int8
 * 1.2x-6.1x (geomean 2.1x), f32 into 2N 0.57x-3.9x (geomean 1.27x; NHWC ->
 * 2N 32x28x28x256 0.57x-0.69x and nChw8c -> 2N 48x96x20x20 0.72x-0.78x the
 * losses that held over 3 rounds). Where the plan streams (CHWN4 -> 2N f32
 * past the threshold) it read 0.73x-0.91x, and keeps it.
 * Where more than 16 of the box's destination rows fall into one cache set
 * (HWCN -> nChw8c and NCHW4 with N = 32, rows 784 KiB apart), each
 * square's 16-byte pieces of them left the cache before the next square
 * wrote the rest of their lines: the box's rows are put together in a
 * private buffer and go out whole (kernels/relayout.cl RL_FLAT_STAGE).
 * Alternating in one process on the Zen 4 machine, 2-3 rounds, new/old
 * (bench/TUNING.md, "Flat boxes through a private buffer"): HWCN -> nChw8c
 * int8 28x28x256x32 2.1-2.2x, NCHW4 1.7-2.2x; CHWN4 -> nChw8c u4 1.0-3.4x;
 * NHWC -> 2N f16 256x32x32x64 1.3x; FRACTAL_Z -> 4N int8
 * 256x64x32x32 0.95-1.84x. With 16 rows or fewer it lost as often as it
 * gained (f16 HWCN -> NCHW4 56x56x256x16 0.67-0.90x, nChw8c -> 2N
 * 256x64x32x32, 8 rows, 0.53-0.56x; NCHW -> CHWN4 f16 3x3, 9 rows,
 * 1.34-1.37x). */
static void plan_flat(rl_layout_plan *p, int size) {
  const rl_box_axis *P = &p->box[0], *K = &p->box[2];
  int64_t width = 16 / size;
  if (P->axis < 0 || p->vec < 2) return;
  int narrow = (size <= 2 || (size == 4 && !p->stream)) && K->block < width &&
               width % K->block == 0 && p->axes[P->axis].extent >= width;
  if (p->tile || p->wide || p->span || p->staged || p->shift ||
      K->block != p->axes[K->axis].extent ||
      (!narrow && (p->vec < 4 || p->ahead || K->block % p->vec == 0)))
    return;
  /* rl_plan_box leaves Q out where K's rows fill the box: it comes back */
  int q = p->box[1].axis;
  if (q < 0 && p->naxes >= 2 && p->naxes - 2 != P->axis &&
      p->axes[p->naxes - 2].check < 0)
    q = p->naxes - 2;
  if (q < 0 || p->axes[q].dstride != K->block) return; /* continues_rows */
  int64_t rows = p->axes[q].extent * K->block;
  if (narrow && rows % width * 8 > rows) return;
  if (p->box[1].axis < 0) p->box[1] = (rl_box_axis){q, 1, 0};
  if (narrow) p->vec = (int)width;
  int64_t row = K->block * size, steps = 64; /* the fewest whole lines */
  while (steps > 1 && row * (steps / 2) % 64 == 0) steps /= 2;
  rl_box_block(p, 0, 16 * p->vec);
  while (narrow && 2 * steps * p->box[0].block * row <= 16384) steps *= 2;
  rl_box_block(p, 1, steps);
  p->flat = 1;
  /* more than 16 destination rows in one cache set: each row whole */
  int64_t stage = p->box[0].block * p->box[1].block * K->block;
  if (p->box[0].block > 16 &&
      cache_sets(p->axes[p->box[0].axis].dstride * size) == 1 &&
      stage * size <= 16384)
    p->flat_stage = (int)stage;
  p->ahead = 2;
  p->stream = 0;
}

/* CPU devices, the other way: P whole, free of padding and a divisor of
 * a square's 16 bytes, 1- and 2-byte elements, with Q continuing its run
 * in the source (2N, 4N and CHWN4 as sources: 2 or 4 images, then the
 * pixels or N; not a 3x3 kernel's 9 pixels, pixel_runs) and K's extent at
 * least a square: squares of 16 bytes along the source's run
 * across P and Q by 16 bytes along K, each column written as a 16-byte
 * piece of its destination row (kernels/relayout.cl rl_flat_squares), in
 * boxes of a line of K by up to 16 KiB. Before, squares of P's width.
 * Alternating runs on the Zen 4 machine, 2 rounds, new/old geomean of the
 * pairs that changed (bench/TUNING.md, "Narrow P across Q"): int8
 * 32x256x28x28 2.42x (15 pairs, 1.57x-4.36x), 64x256x56x56 1.39x,
 * 1024x512x3x3 1.89x; f16 1.39x, 1.14x, 1.33x (0.77x-4.0x). Not where
 * the plan streams: CHWN4 -> NCHW f16 64x256x56x56 read 0.56x-0.64x. */
static void plan_flat_cols(rl_layout_plan *p, int size) {
  const rl_box_axis *P = &p->box[0], *Q = &p->box[1], *K = &p->box[2];
  int64_t width = 16 / size;
  if (size > 2 || p->vec < 2 || p->tile || p->wide || p->span || p->flat ||
      p->staged || p->shift || p->stream || Q->axis < 0)
    return;
  const rl_iter_axis *a = &p->axes[P->axis], *q = &p->axes[Q->axis];
  if (a->sstride != 1 || a->extent >= width || width % a->extent ||
      P->block != a->extent || a->check >= 0 || p->skip ||
      q->sstride != a->extent || q->check >= 0 ||
      q->extent * a->extent < width || p->axes[K->axis].extent < width)
    return;
  p->vec = (int)width;
  rl_box_block(p, 2, 64 / size);
  rl_box_block(p, 1, 16384 / (p->box[2].block * size * a->extent));
  p->flat = 2;
  p->ahead = 0;
  p->lead = 0;
  p->stream = 0;
}

/* CPU devices, K one block of up to 16 bytes, strided in the source, with
 * Q continuing its rows and P's rows following one another (NCHW -> CHWN4:
 * 4 channels, N, then the pixels): a box of P x all of Q x K is one run of
 * whole destination rows. Each destination line takes 16 (int8) N's source
 * rows, which at 64x256x56x56 lie a multiple of 4 KiB apart and crowd one
 * cache set, so no box order both reads each source line once and writes
 * each destination line whole (plan_span). A staged box does both: its
 * squares, 16 bytes per row (K's block at each of `span` steps along Q),
 * go to a private buffer of up to 16 KiB, Q step by Q step, each step
 * reading whole lines of its rows; then the buffer goes out in order, with
 * non-temporal stores. Each Q step first asks for its rows' lines 3 lines
 * past the box (lead): the next boxes along P continue the same runs, too
 * many for the core's prefetchers to follow. A hand-written kernel of that
 * shape, alternating in one process with the plan before it, NCHW -> CHWN4
 * 64x256x56x56 int8: 1.63-1.68x (work-groups of 1 and 4), 1.19-1.28x in
 * groups of 16; without the prefetch 1.12-1.22x; without the buffer, its
 * lines written in place, 0.83-0.99x. As planned, alternating likewise
 * with the tiles of plan_span: 64x256x56x56 int8 1.49-1.57x, f16 1.55x,
 * f32 1.27x; int8 128x128x28x28 1.30x, 32x256x56x56 1.11x, 256x64x56x56
 * 1.26x, 128x128x56x56 1.44x, 64x64x112x112 1.78x, 64x512x14x14 1.12x.
 * Every row's prefetch at the box's start instead of each Q step's:
 * 0.64-0.78x. Q's extent need not be whole squares' worth (N not a
 * multiple of 4 at int8, odd at f16): Q's last steps go element by element
 * into the buffer, the squares' rows unaligned, since the box's rows then
 * lie off the 16-byte grid (a box too short along P for the buffer writes
 * plain). Before, such boxes moved as tiles (plan_span). Alternating runs
 * on the 2-core machine, ratio to copy before and after: NCHW -> CHWN4
 * 62x256x56x56 int8 0.59-0.60 and 0.82-0.84, f16 63x256x56x56 0.72-0.74
 * and 1.08-1.09, int8 5x256x112x112 0.35 and 0.56-0.57, 6x256x112x112
 * 0.28-0.31 and 0.40-0.41, f16 7x256x112x112 0.24-0.25 and 0.68-0.70;
 * int8 30x256x56x56 alike (0.57-0.62). */
static void plan_staged(rl_layout_plan *p, const relayout_desc *dst, int size,
                        int64_t stream_from) {
  const rl_box_axis *P = &p->box[0], *Q = &p->box[1], *K = &p->box[2];
  int64_t width = 16 / size, line = 64 / size;
  if (!rl_too_big(dst, stream_from) || p->vec < 2 || !continues_rows(p)) return;
  const rl_iter_axis *a = &p->axes[P->axis], *q = &p->axes[Q->axis],
                     *k = &p->axes[K->axis];
  int64_t row = k->extent * size, run = a->dstride * size;
  if (K->block != k->extent || a->check >= 0 || q->check >= 0 || 16 % row ||
      a->dstride != q->extent * q->dstride || q->extent < 16 / row ||
      run * width > 16384 || a->extent < width)
    return;
  p->vec = (int)width;
  p->tile = p->wide = 0;
  p->span = row < 16 ? (int)(16 / row) : 0;
  p->box[1].block = q->extent;
  int64_t rows = 16384 / run / width * width;
  rl_box_block(p, 0, rows < a->extent ? rows : a->extent / width * width);
  p->staged = (int)(p->box[0].block * run / 16);
  p->stream = (int)width;
  p->lead = a->extent > p->box[0].block + 3 * line ? (int)(3 * line) : 0;
}

/* CPU devices, rows contiguous in the source whose runs in the
 * destination start off the 16-byte grid (FRACTAL_NZ -> ND with N odd:
 * each row of N elements starts where the one before ends), which
 * stream_stores leaves plain: each of the box's rows, Q's pieces of K's
 * block one after another in the destination, goes through a private
 * buffer shifted by the row's offset from the grid, then out in aligned
 * non-temporal stores, the last completed from the next box's first
 * piece (kernels/relayout.cl rl_shift_row). Only where Q's extent holds 4
 * boxes or more: a row's last box, whose last piece is partly padding,
 * writes plain, and a line written partly plain and partly streamed is
 * slow. Alternating runs in one process on the 2-core machine, median
 * GB/s plain and shifted: FRACTAL_NZ -> ND 8197x8195 f16 6.3 and 11.6
 * (6.9 and 13.9 in another round), f32 5.9 and 10.9, int8 6.2 and 12.1,
 * f64 5.0 and 7.7; 4096x11001 f16 7.4 and 13.5; 1001x4097 f16 8.0 and
 * 12.9; 4096x1001 f32 7.1 and 8.1; NC1HWC0 -> NHWC 64x1001x28x28 f32
 * 14.7 and 17.4, f64 14.4 and 19.3; NCHW32 -> NHWC the same, f32 14.8
 * and 16.4. Ends written plain instead (4 of every 9 lines of a 512-byte
 * run mixed plain and streamed): 1.1x; rows of 2 boxes (NC1HWC0 -> NHWC
 * f32 with 255 channels, 16 pieces of 16): 0.83-0.92x. */
static void plan_shift(rl_layout_plan *p, const relayout_desc *dst, int size,
                       int64_t stream_from) {
  const rl_box_axis *P = &p->box[0], *K = &p->box[2];
  int64_t width = 16 / size;
  if (p->vec > 1 || p->stream || !rl_too_big(dst, stream_from) ||
      !continues_rows(p) || P->axis < 0 || p->axes[K->axis].sstride != 1 ||
      K->block % width || p->axes[P->axis].dstride % width == 0 ||
      p->axes[p->box[1].axis].extent < 4 * p->box[1].block ||
      K->block * p->box[1].block * size < 64)
    return;
  p->stream = (int)width;
  p->shift = 1;
}

/* CPU devices, K a few planes (2 to 8 elements, strided in the source)
 * interleaved into pixels that follow one another in the destination
 * (NCHW -> NHWC with 3 channels, NCHW -> 4N): a box of 1 KiB of each
 * plane reads 16 bytes of each at a time and builds the K 16-byte vectors
 * they interleave into with shuffles (kernels/relayout.cl rl_planes,
 * host/codegen.c mix_planes). Before, such boxes moved squares 2 to 4
 * elements wide (K's extent), or element by element. Alternating runs in
 * one process on the 2-core machine, median GB/s before and after: NCHW
 * -> NHWC 64xCx224x224 int8 C = 2 9.6 and 30.0, 3 2.6 and 18.9 (5.1 and
 * 29.6 in another round), 4 19.2 and 26.7, 5 9.0 and 22.2, 6 9.1 and
 * 22.6, 7 7.5 and 17.6; f16 C = 2 10.7 and 20.3, 3 11.3 and 24.5, 4 13.5
 * and 22.3, 6 14.9 and 24.4, 7 14.2 and 24.6, 8 19.2 and 24.7; f32 C = 2
 * 14.9 and 19.4, 3 17.3 and 25.5, 4 17.1 and 26.4, 8 19.8 and 28.0; f64 C
 * = 3 17.7 and 27.4; 64x256x56x56 int8 NCHW -> 4N 17.3 and 26.0, NCHW4
 * 14.9 and 19.4; NCHW -> nChw8c f16 17.1 and 23.1, f32 18.7 and 28.0. Not
 * for 1-byte elements with 8 planes, whose 8 x 8 squares ran alike
 * (0.66-1.46x over 7 rounds, NCHW -> NHWC and nChw8c), nor for 16 planes
 * (0.52-1.0x, nChw16c).
 * Split, the other way: P a few planes (2 to 7 elements of 1 byte, 2 to 5
 * wider ones), each pixel's elements one after another in the source, into
 * planes in the destination (NHWC -> NCHW with 3 channels, 4N, 2N and
 * NCHW4 -> NCHW): 1 KiB of pixels per box, 16 bytes of the source at a
 * time shuffled into a vector of each plane, 4 such steps at once so that
 * each plane's stores fill a line one after another (one step at a time,
 * streamed f16 and f32 with 4 to 8 planes fell to 5 GB/s, 0.3 of the
 * squares before; 4N -> NCHW int8, planes 784 KiB apart, to 0.36).
 * A box's last pixels under those 4 steps go one step at a time (before:
 * element by element; 3 alternating rounds on the Zen 4 machine, GB/s
 * before and after: CHWN4 -> HWCN int8 32x256x28x28, 32 pixels per box,
 * 2.7-4.8 and 11.8-29.3, 16x256x56x56 5.0-8.4 and 25.4-43.8, f16 3.1-4.2
 * and 8.0-9.6; NCHW4 -> NCHW f16 32x256x28x28 19.8-20.8 and 50.4-51.5).
 * Before, squares 2 to 4 elements wide, or element by element. Alternating
 * runs, median GB/s before and after, two rounds: NHWC -> NCHW
 * 64x224x224xC int8 C = 2 4.9 and 17.9, 4.9 and 15.9; 3 6.5 and 14.8, 6.4
 * and 15.7; 4 11.7 and 13.5, 10.7 and 13.7; 5 10.4 and 13.3, 14.8 and 18.7;
 * 7 11.8 and 13.8, 11.6 and 13.4; f16 C = 2 11.5 and 17.8, 13.5 and 24.7;
 * 3 11.2 and 14.7, 13.8 and 15.3; 5 17.8 and 20.1, 16.7 and 20.3; f32 C = 3
 * 17.7 and 23.8, 17.3 and 23.9; 5 19.0 and 24.3, 17.0 and 21.9; f64 C = 3
 * (32 images) 18.6 and 25.4, 17.9 and 24.8; 64x256x56x56 -> NCHW: 4N
 * int8 17.5 and 22.6, 16.2 and 20.7, f32 18.5 and 24.7, 17.8 and 19.9; 2N
 * int8 9.1 and 22.0, 9.0 and 14.8, f16 17.1 and 25.8, 18.1 and 27.0;
 * NCHW4 int8 17.0 and 15.0, 16.9 and 20.2, f16 15.4 and 22.5, 15.1 and
 * 22.6, f32 26.3 and 26.1, 27.6 and 27.1. With 6 planes f16 ran
 * 0.95-0.98x (f32 1.07-1.17x), with 7 or 8 f16 and f32 0.73-0.92x. */
static void plan_planes(rl_layout_plan *p, const relayout_desc *dst, int size,
                        int64_t stream_from) {
  const rl_box_axis *P = &p->box[0], *K = &p->box[2];
  if (P->axis < 0 || p->box[1].axis >= 0 || p->skip) return;
  const rl_iter_axis *a = &p->axes[P->axis], *b = &p->axes[K->axis];
  /* K the planes, their pixels interleaved along P in the destination; or
   * split, P the planes, their pixels interleaved along K in the source */
  int64_t width = 16 / size, most = size == 1 ? 7 : 8;
  int mix = a->sstride == 1 && a->dstride == b->extent &&
            K->block == b->extent && b->extent <= most,
      split = !mix && a->sstride == 1 && b->sstride == a->extent &&
              a->extent <= (size == 1 ? 7 : 5);
  const rl_iter_axis *planes = split ? a : b, *pixels = split ? b : a;
  int64_t k = planes->extent;
  if ((!mix && !split) || k < 2 || planes->check >= 0 || pixels->extent < width)
    return;
  rl_layout_plan t = *p;
  rl_box_block(&t, split ? 0 : 2, k);
  rl_box_block(&t, split ? 2 : 0, 1024 / size);
  t.vec = 1;
  t.tile = t.wide = t.span = t.ahead = t.lead = t.staged = t.shift = 0;
  /* interleaved: each plane's load asks for its line 4 lines on. A box of
   * short planes (14x14 f16: 392 bytes) reads each for too few lines for
   * the hardware prefetcher to follow it. NCHW -> NCHW4 f16, alternating
   * with a build without, median GB/s, 2-3 rounds: 64x512x14x14 5.3-10.9
   * and 8.9-12.4, 32x256x28x28 9.7-14.8 and 12.2-18.3; 56x56 and 3x3
   * alike, and so was NCHW -> NHWC with 3 channels at 224x224 */
  if (!split) t.lead = 256 / size;
  t.planes = (int)k;
  t.split = split;
  /* split: each plane's stores on the grid where the box's first one is.
   * Interleaved: each box's run whole lines, so that no line gets both
   * streamed and plain stores (the last pixels' or the next box's).
   * Streamed, such boxes ran at a fifth of their plain speed: NCHW ->
   * NCHW4 f16 1024x512x3x3 (72-byte runs) 1.9-2.1 GB/s streamed against
   * 8.3-11.9 plain, 1024x512x7x7 7.0-8.1 against 13.4-15.6, NCHW ->
   * nChw8c f32 1024x512x3x3 5.0-6.0 against 11.3-15.1 (alternating, 3
   * rounds, with the prefetch above) */
  int lines = a->extent * k * size % 64 == 0; /* so is each box's 1 KiB */
  for (int i = 0; i < t.naxes; i++)
    if (i != t.box[0].axis && i != t.box[2].axis)
      lines &= t.axes[i].dstride * size % 64 == 0;
  t.stream = rl_too_big(dst, stream_from) &&
                     (split ? a->dstride * size % 16 == 0 : lines)
                 ? (int)width
                 : 0;
  *p = t;
}

/* CPU devices, each pixel's elements a few to a pixel on both sides: A of
 * them one after another in each source row (P, source stride 1), B in
 * each destination row (K), the pixels along Q (NCHW4 -> 2N: 4 channels a
 * pixel in the source, 2 images in the destination; 2N <-> nChw8c), each
 * pixel's A x B block at most 16 bytes. Squares of P's or K's width moved
 * them 2 or 4 elements at a time (NCHW4 -> 2N int8 11 GB/s on the Zen 4
 * machine, where the copy kernel reads 100 from the cache). Instead the
 * planes' shuffles both ways at once (kernels/relayout.cl rl_planes,
 * RL_WEAVE): 16 bytes of each of a step's B source rows' A vectors into
 * B vectors of each of its A destination rows, in boxes of 1 KiB of each
 * destination row, streamed where each box's runs are whole lines.
 * Alternating in one process with the plans before, median GB/s old and
 * new (bench/TUNING.md, "Planes both ways"): int8 NCHW4 -> 2N
 * 32x256x28x28 11.4-11.7 and 59.1-59.9, 64x256x56x56 11.3 and 52.4; 2N
 * -> NCHW4 12.2-12.5 and 73.2-74.9; 2N -> nChw8c 16.4-16.8 and 32.7-33.9;
 * nChw8c -> 2N 17.4-17.5 and 27.5-29.0; NCHW4 <-> 4N 0.7x-1.5x; f16
 * NCHW4 <-> 2N 1.6x-3.1x over 9 shapes. Blocks of 32 bytes and more keep
 * their plans: f16 2N <-> nChw8c and NCHW4 <-> 4N read 0.32x-2.0x (0.32x
 * at 48x96x20x20, in the cache), f32 and f64 0.98x-1.6x at 32x256x28x28
 * but 0.05x-2.2x at 3x3 and 7x7, where boxes of partial lines streamed
 * (streaming now needs whole lines; not measured again). */
static void plan_weave(rl_layout_plan *p, const relayout_desc *dst, int size,
                       int64_t stream_from) {
  const rl_box_axis *P = &p->box[0], *Q = &p->box[1], *K = &p->box[2];
  if (P->axis < 0 || Q->axis < 0 || p->skip || p->planes) return;
  const rl_iter_axis *a = &p->axes[P->axis], *q = &p->axes[Q->axis],
                     *b = &p->axes[K->axis];
  int64_t width = 16 / size;
  if (a->sstride != 1 || a->extent < 2 || b->extent < 2 ||
      a->extent * b->extent * size > 16 || a->check >= 0 || b->check >= 0 ||
      q->check >= 0 || q->sstride != a->extent || q->dstride != b->extent ||
      q->extent < width)
    return;
  rl_layout_plan t = *p;
  rl_box_block(&t, 0, a->extent);
  rl_box_block(&t, 2, b->extent);
  rl_box_block(&t, 1, 1024 / (b->extent * size) / width * width);
  t.vec = 1;
  t.tile = t.wide = t.span = t.ahead = t.lead = t.staged = t.shift = 0;
  t.flat = t.flat_stage = 0;
  t.planes = (int)a->extent;
  t.weave = (int)b->extent;
  int64_t run = t.box[1].block * b->extent * size; /* a box's, per row */
  int lines = a->dstride * size % 64 == 0 && run % 64 == 0 &&
              q->extent * b->extent * size % 64 == 0;
  for (int i = 0; i < t.naxes; i++)
    if (i != t.box[0].axis && i != t.box[1].axis && i != t.box[2].axis)
      lines &= t.axes[i].dstride * size % 64 == 0;
  t.stream = rl_too_big(dst, stream_from) && lines ? (int)width : 0;
  *p = t;
}

/* CPU devices, 1-byte squares that do not stream, writing each destination
 * row in pieces under a line, whose K rows all fall into one set of the
 * first-level cache in the source (a stride a multiple of 4 KiB: NCHW ->
 * HWCN int8 64x256x56x56, K's 64 rows 784 KiB apart). A square read 8
 * bytes of 8 such lines, which left the cache before the next square along
 * P read the rest of them, and wrote 8 bytes of 8 rows, whose lines (16
 * KiB apart there, in one set too) left before the next square along K
 * wrote theirs. Instead (kernels/relayout.cl rl_copy_in) the box, a line
 * along K by a line along P (or P's whole extent, and Q's steps continuing
 * it in the source up to a line), is read a whole source line at a time
 * into a private buffer, transposed as 16 x 16 squares into another, and
 * written one destination row after another, a whole line at a time,
 * streamed where its rows start on the line grid. Alternating in one
 * process on the Zen 4 machine, 3 rounds, mean ratio to copy new/old
 * (bench/TUNING.md, "Boxes through private buffers"): into HWCN from NCHW
 * 64x256x56x56 3.5x, 64x64x112x112 2.2x, 256x64x32x32 2.3x; from NHWC
 * 2.3x, NC1HWC0 1.7x, nChw16c 1.6x, NCHW32 1.5x, NCHW64 1.5x; HWCN ->
 * NCHW 2.2x. Not for wider elements (f16 into HWCN 0.62x-1.26x), nor where
 * a group of squares already writes whole lines or K's whole block
 * (widened CHWN4 and 2N conversions: 0.5x-0.85x), nor where K's rows
 * spread over 2 sets or more (FRACTAL_Z -> nChw8c int8, rows 2 KiB apart:
 * 0.4x). Also:
 * - K of 16 or 32 rows, whole, continued in the destination by Q's or P's
 *   steps (into HWCN with N = 32): Q then takes a line of each row;
 * - P's destination rows, at most 64 of them, in one cache set where K's
 *   source rows are not (HWCN -> NC1HWC0, NCHW32 and NCHW64, N's rows 784
 *   KiB apart): Q, continuing K's rows, takes 512 bytes of each (the box
 *   at most 16 KiB), and each row goes out whole before the next;
 * - destinations in the cache too, written with plain stores.
 * Alternating in one process on the Zen 4 machine, 2 rounds, GB/s before
 * and after (bench/TUNING.md, "Copy-in boxes for narrow and crowded
 * rows"): NCHW -> HWCN int8 32x256x28x28 5.9-6.0 and 19.6-23.4, NHWC ->
 * HWCN 12.1 and 30.3-35.2, HWCN -> NC1HWC0 10.8-10.9 and 35.2-36.3
 * (56x56x256x64 8.9 and 23.9-24.8), HWCN -> NCHW32 56x56x256x16
 * 12.5-20.6 and 21.0. */
static void plan_copy_in(rl_layout_plan *p, const relayout_desc *dst, int size,
                         int64_t stream_from) {
  const rl_box_axis *P = &p->box[0], *Q = &p->box[1], *K = &p->box[2];
  if (size != 1 || p->vec < 2 || p->stream || p->tile || p->wide || p->span ||
      p->flat || p->planes || p->staged || p->shift)
    return;
  const rl_iter_axis *a = &p->axes[P->axis], *k = &p->axes[K->axis];
  int64_t piece = squares_group(p, 1) * p->vec; /* bytes of a row at once */
  int rows = continues_rows(p),
      narrow = (k->extent == 16 || k->extent == 32) && K->block == k->extent &&
               (rows || a->dstride == k->extent),
      in_set = cache_sets(k->sstride) == 1,
      out_set = !in_set && cache_sets(a->dstride) == 1 && a->extent <= 64;
  if ((k->extent % 64 && !narrow) || a->extent % 16 || piece >= 64 ||
      piece >= K->block || !(in_set || out_set) || (p->ahead && !out_set))
    return;
  p->vec = 16;
  p->lead = p->ahead = 0;
  p->copy_in = 1;
  p->box[2].block = narrow ? k->extent : 64;
  rl_box_block(p, 0, 64);
  /* Q's steps continuing P's whole extent in the source: up to a line */
  int runs = Q->axis >= 0 && P->block == a->extent &&
             p->axes[Q->axis].sstride == a->extent * a->sstride;
  int64_t q = runs ? 64 / P->block : 1;
  if (rows) { /* Q's steps continuing K's rows in the destination */
    int64_t want = (out_set ? 512 : 64) / K->block,
            most = 16384 / (K->block * P->block);
    want = want < most ? want : most;
    q = q > want ? q : want;
  }
  rl_box_block(p, 1, q);
  /* rows on the line grid when the box's first one is; Q's steps, where
   * they continue K's rows, as whole lines */
  int whole = 1;
  for (int b = 0; b < 2; b++) {
    const rl_box_axis *x = &p->box[b];
    if (x->axis < 0 || p->axes[x->axis].dstride % 64 == 0) continue;
    whole &= b == 1 && rows && x->block * K->block % 64 == 0 &&
             p->axes[x->axis].extent % x->block == 0;
  }
  p->stream = whole && rl_too_big(dst, stream_from) ? 16 : 0;
}

void rl_plan_lines(rl_layout_plan *p, const relayout_desc *dst, int size,
                   int64_t stream_from) {
  p->family = RL_FAMILY_LINES;
  rl_plan_box(p, size);
  p->stream = stream_stores(p, dst, size, stream_from);
  plan_staged(p, dst, size, stream_from);
  plan_shift(p, dst, size, stream_from);
  plan_bytes16(p, dst, size, stream_from);
  plan_tiles(p, dst, size, stream_from);
  plan_wide(p, size);
  plan_span(p, size);
  plan_flat(p, size);
  plan_flat_cols(p, size);
  plan_planes(p, dst, size, stream_from);
  plan_weave(p, dst, size, stream_from);
  plan_copy_in(p, dst, size, stream_from);
  p->group = squares_group(p, size);
  p->tail = square_tail(p, size);
}
