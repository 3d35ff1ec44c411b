/* plan.h - the planner's view of a conversion, shared by planner, codegen,
 * runtime */
#ifndef RELAYOUT_PLAN_H
#define RELAYOUT_PLAN_H

#include "internal.h"

typedef enum rl_family {
  RL_FAMILY_REFERENCE, /* the scalar reference does the work */
  RL_FAMILY_COPY,      /* source and destination bytes are identical */
  RL_FAMILY_ROWS,      /* runs contiguous on both sides: vector moves */
  RL_FAMILY_STAGE,     /* GPU: a box through local memory, read in source
                        * order and written in destination order */
  RL_FAMILY_GATHER,    /* anything else, element by element */
  RL_FAMILY_LINES      /* CPU devices, any affine map: a box of rows per item */
} rl_family;

/* A destination iteration axis. In an affine plan each axis also has the
 * source stride its index moves by; `check` names the dim whose logical
 * extent bounds it (destination padding), or -1. */
typedef struct rl_iter_axis {
  int64_t extent, dstride, sstride, weight;
  int dim;
  int check;
} rl_iter_axis;

/* LINES: one of the three axes a work-item's box spans, with the box's
 * extent along it; axis -1 when unused (extent 1). `step`: when the axis
 * bounds the same dim as K, how many fewer of K's elements hold data per
 * step along it (0 otherwise). */
typedef struct rl_box_axis {
  int axis;
  int64_t block, step;
} rl_box_axis;

typedef struct rl_layout_plan {
  rl_family family;
  int affine;    /* source offset = sum of index * sstride over the axes */
  unsigned skip; /* affine: the dims (a bit each) whose last piece runs on
                  * past the destination's end along them, to the end of a
                  * source block; what lies past that end is skipped */
  int naxes;     /* affine: merged axes, outermost first */
  rl_iter_axis axes[RELAYOUT_MAX_AXES * 2];
  int stage_bits[RELAYOUT_MAX_AXES * 2];   /* STAGE: log2 of each axis' block
                                            * in the box (0: not in it) */
  int stage_sorder[RELAYOUT_MAX_AXES * 2]; /* STAGE: the axes in source
                                            * order, stride ascending */
  int vec;  /* ROWS: elements per vector move; LINES: the side of the squares
             * a transposing box is moved in (1: element by element), their
             * rows along P with tile */
  int tile; /* LINES: 0, or 16 bytes' worth of elements: the squares are
             * tiles of vec rows of that many elements (1- and 2-byte types,
             * 4 rows of 16 bytes) */
  int span; /* LINES: 0, or the steps along Q a square's or tile's rows
             * span, K's whole block at each (K's block under 16 bytes) */
  int flat; /* LINES: squares take the box's rows in destination order,
             * Q step after Q step, wherever along Q and K they fall (K
             * whole, Q continuing its rows, K's extent not whole squares);
             * 2: its columns in source order likewise (P whole, under a
             * square, Q continuing its run in the source) */
  int flat_stage; /* LINES, flat 1: 0, or the elements of a private buffer
                   * the box's destination rows are put together in (more
                   * than 16 of them in one cache set), then written whole */
  int wide;       /* LINES: 1-byte squares of 4 rows along K by 16 bytes along P
                   * (K's block 4, the rows it writes following one another) */
  rl_box_axis box[3]; /* LINES: P, Q, then K, the innermost axis */
  int p_first;        /* LINES: consecutive work-items step along P, not Q */
  int ahead;  /* LINES: squares prefetch the source of the Q step this many
               * steps ahead (with flat, of the squares this many on along
               * the box's rows) (0: none) */
  int lead;   /* LINES: squares first prefetch each source row's line this
               * many elements past the box along P (4-bit squares and
               * interleaved planes: past each load) (0: none) */
  int tail;   /* LINES: squares' boxes build their rows past the last
               * square along P into vectors, not element by element */
  int group;  /* LINES: squares side by side along K a box moves at once,
               * writing each row's pieces one after another (0 or 1: one
               * square at a time) */
  int stream; /* LINES: elements (bytes for 4-bit types) per non-temporal
               * store (0: plain stores) */
  int staged; /* LINES: 0, or the 16-byte rows of a private buffer that
               * holds a box's destination (one run of whole rows) before
               * it is written out */
  int shift;  /* LINES: each row of the box (Q's pieces of K's block, one
               * run in the destination that starts off the 16-byte grid)
               * goes through a private buffer, to stream from that grid on */
  int planes; /* LINES: 0, or K's extent, the planes a box interleaves 16
               * bytes of each at a time (rows of K elements, strided in
               * the source, that follow one another in the destination);
               * with split or weave, P's extent, the elements of a
               * pixel one after another in the source */
  int split;  /* LINES, with planes: the other way, P's few elements of
               * each pixel, one after another in the source, into as many
               * planes, K's rows in the destination */
  int weave;  /* LINES, with planes (P's extent): 0, or K's extent; both
               * ways at once, the pixels along Q (NCHW4 -> 2N: each
               * pixel's 4 channels one after another in the source, its 2
               * images in the destination) */
  int odd;    /* LINES, 4-bit squares: a source row may start mid-byte (a
               * source stride other than P's, or P's extent, is odd) */
  int odd_k;  /* LINES, 4-bit squares: K's extent is odd, so destination
               * rows start mid-byte; each Q step's run of P's rows, whole
               * bytes, goes through a private buffer */

  int copy_in; /* LINES: 1-byte squares whose source rows, or destination
                * rows, fall into one cache set: the box's source read
                * whole into a private buffer, its destination rows put
                * together in another and written one after another */
} rl_layout_plan;

/* Analyses dst <- src (same logical dims) for a GPU (the families that
 * coalesce) or a CPU device (whole rows per work-item); a CPU plan whose
 * destination has stream_from bytes or more streams its stores where it can
 * (stream_from 0: never). Never fails. */
void rl_plan_layouts(rl_layout_plan *out, const relayout_desc *dst,
                     const relayout_desc *src, int for_cpu,
                     int64_t stream_from);

/* A conversion whose elements move in wider units (both layouts keep one
 * dim innermost and contiguous, its elements pairing up: 4-bit elements
 * into bytes, and on up to 8 bytes where the shorter of the two runs folds
 * into one unit): the same conversion of unsigned units, in dst_w and
 * src_w, which the planner and kernels then take instead. 0 when it is not
 * such a conversion (dst_w and src_w are then copies of dst and src). */
int rl_widen(relayout_desc *dst_w, relayout_desc *src_w,
             const relayout_desc *dst, const relayout_desc *src);

/* The kernel source for a plan: a generated header, then kernels/relayout.cl.
 * Returns a malloc'ed string, or NULL when out of memory. */
char *rl_codegen(const rl_layout_plan *p, const relayout_desc *dst,
                 const relayout_desc *src);
/* The kernel entry point a plan runs. */
const char *rl_kernel_name(const rl_layout_plan *p, const relayout_desc *dst);

#endif /* RELAYOUT_PLAN_H */
