/* plan_lines.c - the planner's CPU family: a box of whole destination rows
 * per work-item, its squares and its stores. The measurements that chose
 * each rule are in docs/notes/PLANNER.md, under the function's name.
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

/* Whether each step along Q reads one contiguous source run shorter than a line
 * per row: P whole, under a line, and K's rows following one another in the
 * source (FRACTAL_Z from a 3x3 kernel's weights: 16 rows of 9 elements, 576
 * contiguous bytes of f32, the next Q step's 72 KiB on at 2048 input channels).
 * The box then takes 16 KiB of such steps instead of 2 KiB, and prefetches each
 * step's run two steps ahead (kernels/lines_squares.cl rl_box_squares).
 * Measured: docs/notes/PLANNER.md, "plan_lines.c, short_runs". */
static int short_runs(const rl_layout_plan *p, int size) {
  const rl_box_axis *P = &p->box[0], *Q = &p->box[1];
  if (P->axis < 0 || Q->axis < 0) return 0;
  const rl_iter_axis *a = &p->axes[P->axis];
  return P->block == a->extent && a->extent * size < 64 &&
         p->axes[p->box[2].axis].sstride == a->extent;
}

/* Whether Q continues P's run in the source, P whole and at most 36 bytes (NCHW
 * -> HWCN of 3x3 weights: P the 9 pixels, Q the input channels, K the output
 * channels, their rows C x 9 elements apart in the source). The box then takes
 * 8 steps of Q, so that each of K's rows reads 8 of P's runs in one, and K is
 * cut to 16 rows. Measured: docs/notes/PLANNER.md, "plan_lines.c, pixel_runs".
 */
static int pixel_runs(const rl_layout_plan *p, int size) {
  const rl_box_axis *P = &p->box[0], *Q = &p->box[1];
  if (P->axis < 0 || Q->axis < 0) return 0;
  const rl_iter_axis *a = &p->axes[P->axis];
  return P->block == a->extent && a->extent * size <= 36 &&
         p->axes[Q->axis].sstride == a->extent * a->sstride;
}

/* CPU devices: each work-item writes a box of whole destination rows. K is the
 * innermost axis.
 * - K strided in the source: the box is a transpose. P is the axis the source
 *   runs along, a cache line of it or more (below), and K is cut to a few
 *   lines' worth, so that the strided reads along K fetch lines that the next
 *   steps along P read from the cache; Q, K's outer neighbour, fills the box up
 *   to 2 KiB (16 KiB where each Q step reads one short run: short_runs), or to
 *   a line of each destination row. Where P and K allow, the box moves as
 *   squares transposed in registers (vec: their side).
 * - K contiguous in the source: P is the axis continuing K's source run
 *   (FRACTAL_NZ's N1, nChw8c's hw). Where Q continues K's rows in the
 *   destination, the box takes 512 bytes of those rows (all of Q when it is
 *   shorter) and P fills the box to 2 KiB: each P step then writes whole lines,
 *   which can stream (stream_stores). Work-items step along P first, so that
 *   consecutive ones continue the same source runs. Without such a Q, P takes 2
 *   KiB of one source run; without a P, Q takes 2 KiB of rows.
 * Measured: docs/notes/PLANNER.md, "plan_lines.c, rl_plan_box". */
void rl_plan_box(rl_layout_plan *p, int size) {
  int n = p->naxes, line = 64 / size; /* elements per cache line */
  const rl_iter_axis *k = &p->axes[n - 1];
  int strided = k->sstride != 1, P = -1;
  for (int i = 0; i + 1 < n; i++)
    if (p->axes[i].extent > 1 &&
        p->axes[i].sstride == (strided ? 1 : k->extent))
      P = i;
  /* Q: K's outer neighbour in the destination. Where that is P (FRACTAL_Z ->
   * NCHW: C0, P, lies between the rows of pixels, K, in the destination), the
   * axis that continues P's run in the source (N) instead, taking 1 KiB of each
   * source row with P.
   * Measured: docs/notes/PLANNER.md, "plan_lines.c, rl_plan_box". */
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
    /* P's run in bytes: a cache line; with Q in the box, where a thread steps
     * through all of Q's source runs before P moves on (CHWN4's N), 1 KiB at a
     * time (K's rows up to 16 KiB), long enough for the hardware prefetcher to
     * follow each run. Without Q, where K's source rows follow one another and
     * are 512 bytes to 1 KiB of 4- or 8-byte elements (NHWC -> NCHW with 128 or
     * 256 channels of f32), the whole row: the box then reads one contiguous
     * run.
     * Measured: docs/notes/PLANNER.md, "plan_lines.c, rl_plan_box". */
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
     * work-item writes each line whole */
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
    /* rows off the line grid, longer than a box and 3 lines: each box asks for
     * its rows' lines 3 lines on along P (lead).
     * Measured: docs/notes/PLANNER.md, "plan_lines.c, rl_plan_box". */
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

/* CPU devices, squares with rows of 8 or 16 bytes: a square writes one piece of
 * each of its rows, the rest of each row's line coming from other squares later
 * along K, so the lines of all its rows stay open. The group of the plan as it
 * stands: stream_stores asks with the squares as planned so far (tiles, wide
 * squares and spans come later, only to plans that do not stream yet;
 * plan_bytes16 and plan_tiles ask again for their squares), the planner at the
 * end. Measured: docs/notes/PLANNER.md, "plan_lines.c, squares_group". */
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

/* CPU devices, plain squares (of elements, one step along Q) whose K's block is
 * whole squares: whether the rows along P past the last square go as vectors,
 * each gathered from K's rows, rather than element by element.
 * Measured: docs/notes/PLANNER.md, "plan_lines.c, square_tail". */
static int square_tail(const rl_layout_plan *p, int size) {
  return p->vec > 1 && !p->tile && !p->wide && !p->span && !p->flat &&
         !p->copy_in && (p->stream || (p->ahead && size == 4));
}

int rl_too_big(const rl_desc *dst, int64_t stream_from) {
  int64_t bytes;
  return stream_from > 0 && !rl_desc_size_bytes(&bytes, dst, NULL) &&
         bytes >= stream_from;
}

/* CPU devices: the elements per non-temporal store a box writes with (0: plain
 * stores only). Such a store sends its line to memory without first reading
 * it into the cache. The rule:
 * - the destination is too big for the cache (stream_from);
 * - squares, one row per store: one square keeps at most 4 lines open at a
 *   time (a group that writes its rows whole, one after another, keeps one
 *   open: plan_bytes16), and the box writes runs of 1 KiB or more, or of 256
 *   bytes or more (tiles: any multiple of a line) whose starts are not a
 *   multiple of 4 KiB apart;
 * - no two rows a square writes at once are a multiple of 4 KiB apart (likely
 *   4 KiB aliasing: the core tells pending accesses apart by their low 12
 *   address bits first), except in a box of short runs (short_runs) whose
 *   groups of squares write each row's line whole, one line after another
 *   along Q;
 * - a square that writes its rows a 16-byte piece at a time (no group: K's
 *   extent holds no 2 squares' worth) streams only where its rows start on the
 *   line grid or lie less than 4 lines apart. Otherwise each row's run in a box
 *   begins and ends in lines that other boxes, or this one much later, finish,
 *   and such partial lines go to memory piece by piece;
 * - rows contiguous in the source, 16 bytes per store: K's block is whole
 *   stores, and the box writes runs of whole lines, 64 bytes or more;
 * - the stores stay aligned when the box's start is: P's and Q's destination
 *   strides are multiples of the store (the kernel checks each box's start, and
 *   writes a misaligned box with plain stores).
 * Measured: docs/notes/PLANNER.md, "plan_lines.c, stream_stores". */
static int stream_stores(const rl_layout_plan *p, const rl_desc *dst, int size,
                         int64_t stream_from) {
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

/* CPU devices, 1- and 2-byte elements: squares 8 rows tall keep 8 destination
 * lines open, too many to stream. Tiles 4 rows tall and 16 bytes wide keep 4
 * open and stream; each reads a 4-element piece of each of 16 bytes' worth of
 * source rows (kernels/lines_squares.cl rl_square_row), so it touches each
 * source line twice as often as a square, and the source lines of K's block
 * must stay in the first-level cache: at most 8 rows per cache set they fall
 * into (cache_sets). So:
 * - where the box's rows follow one another in the destination (NCHW ->
 *   NHWC: P's destination stride is K's block) and K's lines fit, K's block
 *   as planned;
 * - where they lie apart (NHWC -> NCHW), or K's lines do not fit, K's block
 *   cut to those rows; the box's rows, a multiple of a line long, stream
 *   however short (stream_stores);
 * - never where K's source stride is a multiple of 1 KiB;
 * - not where squares stream already (NC1HWC0 int8).
 * 1-byte tiles whose K block's source rows span over 128 pages of 4 KiB per
 * step along P take 64 rows instead, one line of each destination row.
 * Measured: docs/notes/PLANNER.md, "plan_lines.c, plan_tiles". */
static void plan_tiles(rl_layout_plan *p, const rl_desc *dst, int size,
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
 * where a group of them writes each row whole and the rows follow one another,
 * so that they stream one line at a time (rows of 32 bytes, NCHW -> NC1HWC0
 * int8: 2 squares side by side; of 16, nChw16c: 1). A square is 16 loads and
 * 16 non-temporal stores of 16 bytes; 8 x 8 squares move the same bytes in 4
 * times as many 8-byte loads and stores.
 * Measured: docs/notes/PLANNER.md, "plan_lines.c, plan_bytes16". */
static void plan_bytes16(rl_layout_plan *p, const rl_desc *dst, int size,
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

/* CPU devices, 1-byte elements with K's block 4 (NCHW -> 4N, NCHW4): each row
 * of a 4 x 4 square is one 4-byte store. Where P's destination rows follow one
 * another, the square grows to 16 bytes along P, whose 4 rows after the
 * transpose are 16 contiguous bytes each (kernels/lines_squares.cl
 * rl_square_row): a quarter of the loads and stores. Measured:
 * docs/notes/PLANNER.md, "plan_lines.c, plan_wide". */
static void plan_wide(rl_layout_plan *p, int size) {
  const rl_box_axis *P = &p->box[0], *K = &p->box[2];
  if (size == 1 && p->vec == 4 && !p->stream && K->block == 4 &&
      p->axes[P->axis].dstride == 4 && P->block >= 16)
    p->wide = 1;
}

/* CPU devices, 1- and 2-byte elements whose K is one block under 16 bytes (NCHW
 * -> CHWN4: 4 channels) with Q continuing K's rows in the destination (CHWN4's
 * N): a square's rows are 4 or 8 bytes, one load and one store each. A tile
 * takes 16 bytes of rows instead, K's block at 2 or 4 steps along Q
 * (kernels/lines_squares.cl RL_ROW), so each row it writes is 16 contiguous
 * bytes: a quarter of the stores, 4-byte loads as before. Not with the prefetch
 * (short_runs), which works one Q step at a time.
 * Measured: docs/notes/PLANNER.md, "plan_lines.c, plan_span". */
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

/* CPU devices, squares whose K is whole in each box but not whole squares (HWCN
 * -> NCHW, HWIO -> OIHW weights: K the 9, 25 or 49 pixels of each kernel, Q the
 * input channels, continuing K's rows in the destination, P the output
 * channels). The box's rows, one run per element along P, move as squares of
 * consecutive rows wherever along Q they fall (flat), and each square first
 * prefetches the rows 2 squares on: they lie a Q or K step apart in the source,
 * a walk the core's prefetchers do not follow. P takes 16 squares, Q enough
 * steps that each run is whole lines. Narrow: K's block under a square's 16
 * bytes, 1- and 2-byte elements, where tiles do not take it (into 2N and 4N
 * from FRACTAL_Z, NHWC, NC1HWC0 and the channel-blocked formats; HWCN -> NCHW4
 * and nChw8c): the same, squares of 16 bytes (16 x 16 bytes, 8 x 8 halves)
 * across Q, each row written 16 bytes at a time where squares of K's width
 * wrote 2 or 4, in boxes of up to 16 KiB. Not where more than an eighth of the
 * rows fall short of a square (NCHW -> CHWN4 with N = 3: 12 rows). Where more
 * than 16 of the box's destination rows fall into one cache set (HWCN -> nChw8c
 * and NCHW4 with N = 32, rows 784 KiB apart), each square's 16-byte pieces of
 * them left the cache before the next square wrote the rest of their lines: the
 * box's rows are put together in a private buffer and go out whole
 * (kernels/lines_squares.cl RL_FLAT_STAGE).
 * Measured: docs/notes/PLANNER.md, "plan_lines.c, plan_flat". */
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

/* CPU devices, the other way: P whole, free of padding and a divisor of a
 * square's 16 bytes, 1- and 2-byte elements, with Q continuing its run in the
 * source (2N, 4N and CHWN4 as sources: 2 or 4 images, then the pixels or N; not
 * a 3x3 kernel's 9 pixels, pixel_runs) and K's extent at least a square:
 * squares of 16 bytes along the source's run across P and Q by 16 bytes along
 * K, each column written as a 16-byte piece of its destination row
 * (kernels/lines_squares.cl rl_flat_squares), in boxes of a line of K by up to
 * 16 KiB. Measured: docs/notes/PLANNER.md, "plan_lines.c, plan_flat_cols". */
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

/* CPU devices, K one block of up to 16 bytes, strided in the source, with Q
 * continuing its rows and P's rows following one another (NCHW -> CHWN4: 4
 * channels, N, then the pixels): a box of P x all of Q x K is one run of whole
 * destination rows. Each destination line takes 16 (int8) N's source rows,
 * which at 64x256x56x56 lie a multiple of 4 KiB apart and crowd one cache set,
 * so no box order both reads each source line once and writes each destination
 * line whole (plan_span). A staged box does both: its squares, 16 bytes per row
 * (K's block at each of `span` steps along Q), go to a private buffer of up to
 * 16 KiB, Q step by Q step, each step reading whole lines of its rows; then the
 * buffer goes out in order, with non-temporal stores. Each Q step first asks
 * for its rows' lines 3 lines past the box (lead): the next boxes along P
 * continue the same runs, too many for the core's prefetchers to follow. Q's
 * extent need not be whole squares' worth (N not a multiple of 4 at int8, odd
 * at f16): Q's last steps go element by element into the buffer, the squares'
 * rows unaligned, since the box's rows then lie off the 16-byte grid (a box too
 * short along P for the buffer writes plain).
 * Measured: docs/notes/PLANNER.md, "plan_lines.c, plan_staged". */
static void plan_staged(rl_layout_plan *p, const rl_desc *dst, int size,
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

/* CPU devices, rows contiguous in the source whose runs in the destination
 * start off the 16-byte grid (FRACTAL_NZ -> ND with N odd: each row of N
 * elements starts where the one before ends), which stream_stores leaves plain:
 * each of the box's rows, Q's pieces of K's block one after another in the
 * destination, goes through a private buffer shifted by the row's offset from
 * the grid, then out in aligned non-temporal stores, the last completed from
 * the next box's first piece (kernels/lines_stores.cl rl_shift_row). Only where
 * Q's extent holds 4 boxes or more: a row's last box, whose last piece is
 * partly padding, writes plain, and a line written partly plain and partly
 * streamed is slow. Measured: docs/notes/PLANNER.md, "plan_lines.c,
 * plan_shift". */
static void plan_shift(rl_layout_plan *p, const rl_desc *dst, int size,
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
 * interleaved into pixels that follow one another in the destination (NCHW ->
 * NHWC with 3 channels, NCHW -> 4N): a box of 1 KiB of each plane reads 16
 * bytes of each at a time and builds the K 16-byte vectors they interleave into
 * with shuffles (kernels/lines_planes.cl rl_planes, lib/codegen/codegen.c
 * mix_planes). Measured: docs/notes/PLANNER.md, "plan_lines.c, plan_planes". */
static void plan_planes(rl_layout_plan *p, const rl_desc *dst, int size,
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
  /* interleaved: each plane's load asks for its line 4 lines on. A box of short
   * planes (14x14 f16: 392 bytes) reads each for too few lines for the hardware
   * prefetcher to follow it.
   * Measured: docs/notes/PLANNER.md, "plan_lines.c, plan_planes". */
  if (!split) t.lead = 256 / size;
  t.planes = (int)k;
  t.split = split;
  /* split: each plane's stores on the grid where the box's first one is.
   * Interleaved: each box's run whole lines, so that no line gets both streamed
   * and plain stores (the last pixels' or the next box's).
   * Measured: docs/notes/PLANNER.md, "plan_lines.c, plan_planes". */
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

/* CPU devices, each pixel's elements a few to a pixel on both sides: A of them
 * one after another in each source row (P, source stride 1), B in each
 * destination row (K), the pixels along Q (NCHW4 -> 2N: 4 channels a pixel in
 * the source, 2 images in the destination; 2N <-> nChw8c; CHWN4 -> 2N, its
 * pixels apart, where A divides a vector: read in pieces), each pixel's A x B
 * block at most 16 bytes. Instead the planes' shuffles both ways at once
 * (kernels/lines_planes.cl rl_planes, RL_WEAVE): 16 bytes of each of a step's B
 * source rows' A vectors into B vectors of each of its A destination rows, in
 * boxes of 1 KiB of each destination row, streamed where each box's runs are
 * whole lines. Measured: docs/notes/PLANNER.md, "plan_lines.c, plan_weave". */
static void plan_weave(rl_layout_plan *p, const rl_desc *dst, int size,
                       int64_t stream_from) {
  const rl_box_axis *P = &p->box[0], *Q = &p->box[1], *K = &p->box[2];
  if (P->axis < 0 || Q->axis < 0 || p->skip || p->planes) return;
  const rl_iter_axis *a = &p->axes[P->axis], *q = &p->axes[Q->axis],
                     *b = &p->axes[K->axis];
  int64_t width = 16 / size;
  if (a->sstride != 1 || a->extent < 2 || b->extent < 2 ||
      a->extent * b->extent * size > 16 || a->check >= 0 || b->check >= 0 ||
      q->check >= 0 || (q->sstride != a->extent && width % a->extent) ||
      q->dstride != b->extent || q->extent < width)
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

/* CPU devices, 1-byte squares that do not stream, writing each destination row
 * in pieces under a line, whose K rows all fall into one set of the first-level
 * cache in the source (a stride a multiple of 4 KiB: NCHW -> HWCN int8
 * 64x256x56x56, K's 64 rows 784 KiB apart). Instead (kernels/lines_squares.cl
 * rl_copy_in) the box, a line along K by a line along P (or P's whole extent,
 * and Q's steps continuing it in the source up to a line), is read a whole
 * source line at a time into a private buffer, transposed as 16 x 16 squares
 * into another, and written one destination row after another, a whole line at
 * a time, streamed where its rows start on the line grid. Also:
 * - K of 16 or 32 rows, whole, continued in the destination by Q's or P's steps
 *   (into HWCN with N = 32): Q then takes a line of each row;
 * - P's destination rows, at most 64 of them, in one cache set where K's source
 *   rows are not (HWCN -> NC1HWC0, NCHW32 and NCHW64, N's rows 784 KiB apart):
 *   Q, continuing K's rows, takes 512 bytes of each (the box at most 16 KiB),
 *   and each row goes out whole before the next;
 * - destinations in the cache too, written with plain stores.
 * Measured: docs/notes/PLANNER.md, "plan_lines.c, plan_copy_in". */
static void plan_copy_in(rl_layout_plan *p, const rl_desc *dst, int size,
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

void rl_plan_lines(rl_layout_plan *p, const rl_desc *dst, int size,
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
