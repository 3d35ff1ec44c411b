/* plan.h - the planner's view of a conversion, shared by planner, codegen,
 * runtime */
#ifndef RELAYOUT_PLAN_H
#define RELAYOUT_PLAN_H

#include "internal.h"
#include "variant.h"

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
  int dim;       /* its virtual dim; -1 where merged from several */
  unsigned dims; /* the virtual dims it spans, a bit each */
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
  int vec; /* ROWS: elements per vector move; LINES: the side of the squares
            * a transposing box is moved in (1: element by element), their
            * rows along P with tile */
  rl_box_axis box[3]; /* LINES: P, Q, then K, the innermost axis */
  int cpu;            /* planned for a CPU device: its casts quantize
                       * in f32 vectors (kernels/cast.cl) */
#define RL_VARIANT_FIELD(field, macro, how, meaning) int field;
  RL_LINES_VARIANT(RL_VARIANT_FIELD) /* LINES: variant.h */
#undef RL_VARIANT_FIELD
} rl_layout_plan;

/* Analyses dst <- src (same logical dims) for a GPU (the families that
 * coalesce) or a CPU device (whole rows per work-item); a CPU plan whose
 * destination has stream_from bytes or more streams its stores where it can
 * (stream_from 0: never). Never fails. */
void rl_plan_layouts(rl_layout_plan *out, const rl_desc *dst,
                     const rl_desc *src, int for_cpu, int64_t stream_from);

/* The map alone: the merged axes where it is affine (out->affine), as the
 * gather family runs it; rl_plan_layouts starts from it. Dim `keep` (-1:
 * none) stays off other dims' axes, each of its axes checked, so that a
 * kernel has its coordinate (a per-channel cast's channel). */
void rl_plan_affine(rl_layout_plan *out, const rl_desc *dst, const rl_desc *src,
                    int keep);

/* The generic kernels (kernels/generic.cl): a conversion's program (its
 * width, 4 to 64 bits, and kind of map; 4-bit elements take both kinds in
 * one program; a cast, of 8 bits and wider, its two types and cast.cl;
 * malloc'ed, NULL when out of memory), whether its map is the general kind,
 * the kernel that runs it on a CPU device or a GPU with its units of work
 * (elements; bytes of 4-bit ones; tiles), and its argument block (with
 * the bytes from which a destination's stores stream, 0: none; at most
 * RL_GENERIC_LONGS longs, the count returned; a cast's quantization at its
 * end). */
#define RL_GENERIC_LONGS 461
/* A cast's definitions for kernels/cast.cl (each side's kind; with
 * `constants`, the quantization as RL_Q_*, else read at RL_GC) into out,
 * at most room bytes (500 suffice); the length written. */
int rl_cast_defines(char *out, size_t room, const rl_desc *dst,
                    const rl_desc *src, int constants);
/* The generic program's source for the pair's widths, kind of map and,
 * for an affine one, kernel (RL_GTILES: rl_generic_tile, else
 * rl_generic_affine; a program holds one, so that a cold start compiles
 * no other) (for a GPU, RL_GGPU; a cast's for a CPU device, RL_CPU),
 * malloc'd; NULL out of memory. */
char *rl_generic_source(const rl_desc *dst, const rl_desc *src, int for_cpu);
/* Whether the generic program's map is the general one (not affine), and
 * which side a cast quantizes per channel (1: dst, 2: src; 0: neither):
 * the generic kernel then takes the channels' table, each element's
 * channel from its coordinates (an affine map's kept apart for it). */
int rl_generic_general(const rl_desc *dst, const rl_desc *src);
int rl_generic_channels(const rl_desc *dst, const rl_desc *src);
const char *rl_generic_kernel(const rl_desc *dst, const rl_desc *src,
                              int for_cpu, int64_t *units);
int rl_generic_args(int64_t *out, const rl_desc *dst, const rl_desc *src,
                    int for_cpu, int64_t stream_from);

/* A conversion whose elements move in wider units (both layouts keep one
 * dim innermost and contiguous, its elements pairing up: 4-bit elements
 * into bytes, and on up to 8 bytes where the shorter of the two runs folds
 * into one unit): the same conversion of unsigned units, in dst_w and
 * src_w, which the planner and kernels then take instead. 0 when it is not
 * such a conversion (dst_w and src_w are then copies of dst and src). */
int rl_widen(rl_desc *dst_w, rl_desc *src_w, const rl_desc *dst,
             const rl_desc *src);

/* The C of rl_logical(o, out): whether destination offset o holds data,
 * and its logical coordinates into out[0..ndims) (malloc'd; NULL when out
 * of memory). */
char *rl_codegen_logical(const rl_desc *dst);
/* The kernel source for a plan: a generated header, then kernels/common.cl
 * and its family's files.
 * Returns a malloc'ed string, or NULL when out of memory. */
char *rl_codegen(const rl_layout_plan *p, const rl_desc *dst,
                 const rl_desc *src);
struct relayout_aipp;
/* The source of a preprocessing kernel (kernels/preprocess.cl): the
 * configuration (checked) into dst (logical N, C, H, W; not per channel,
 * not 4-bit), frames of frame_bytes, chunk units per work-item, units of
 * rows of pixels where `rows` (malloc'd; NULL when out of memory). */
char *rl_codegen_preprocess(const struct relayout_aipp *a, const rl_desc *dst,
                            int64_t frame_bytes, int64_t chunk, int rows);
/* Its units of work: a pixel (with `rows`, a row of pixels) where a layout
 * pads nothing but C (a work-item writes the pixels' channels and C's
 * padding), else an element. */
int64_t rl_preprocess_units(const rl_desc *dst, int rows);
/* The kernel entry point a plan runs. */
const char *rl_kernel_name(const rl_layout_plan *p, const rl_desc *dst);

#endif /* RELAYOUT_PLAN_H */
