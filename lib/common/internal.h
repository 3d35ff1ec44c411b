/* internal.h - what the core's files share beyond the public header */
#ifndef RELAYOUT_INTERNAL_H
#define RELAYOUT_INTERNAL_H

#include "relayout.h"

#include <stdarg.h>

/* A dim laid out in segments (rl_desc.seg). */
typedef struct rl_segments {
  int dim;
  int64_t len, padded, count;
} rl_segments;

/* The virtual coordinate of x along segmented dim s. */
static inline int64_t rl_seg_virtual(const rl_segments *s, int64_t x) {
  int64_t k = x / s->len;
  return x + (s->padded - s->len) * (k < s->count ? k : s->count);
}

/* The coordinate of virtual coordinate v along segmented dim s; *ok is
 * cleared where v is a segment's padding. */
static inline int64_t rl_seg_logical(const rl_segments *s, int64_t v, int *ok) {
  int64_t k = v / s->padded;
  if (k >= s->count) return v - (s->padded - s->len) * s->count;
  *ok &= v % s->padded < s->len;
  return k * s->len + v % s->padded;
}

/* A descriptor's contents; relayout.h's relayout_desc holds one, opaque.
 * Virtual dims are the logical dims, except in a grouped layout where dims
 * n_dim and c_dim hold the packed out/in channel and one more virtual dim
 * (index ndims) holds the group block. Axes are sorted outermost (largest
 * stride) first. */
typedef struct rl_desc {
  relayout_dtype dtype;
  int ndims;
  char names[RELAYOUT_MAX_DIMS]; /* 'A'..'Z', or '0'+i for positional dims */
  int64_t dims[RELAYOUT_MAX_DIMS];
  int nvdims;
  int64_t vdims[RELAYOUT_MAX_DIMS + 1];  /* valid extent per virtual dim */
  int64_t padded[RELAYOUT_MAX_DIMS + 1]; /* padded, pad_before included */
  int64_t pad_before[RELAYOUT_MAX_DIMS + 1];
  int naxes;
  relayout_axis axes[RELAYOUT_MAX_AXES];
  relayout_groups groups;
  int compact;  /* 1: no gaps between axes, the physical shape is the axes */
  int64_t span; /* elements from offset 0 past the last addressable one */
  /* Elements before the axes' origin (a TPU tensor's offset inside its
   * NPU): every offset the axes give is past it; 0 for other layouts */
  int64_t base;
  /* The array axes a compact buffer is stored in, its leading physical axes
   * merged into one: 4 for FRACTAL_Z (C1*H*W, N1, N0, C0) and FRACTAL_Z_3D
   * (D*C1*H*W, N1, N0, C0), as CANN stores them; 0: one per axis. */
  int stored_rank;
  /* Trailing axes a compact buffer stores as one array axis: 2 for BSH and
   * SBH (N and D as H), 3 for FRACTAL_Z_C04 (C1, H0, C0 as K0); 0: none */
  int merged_tail;
  /* Two logical dims laid out as one virtual dim (FRACTAL_Z_C04's H * W):
   * dim outer's virtual coordinate is x[outer] * extent + x[inner], dim
   * inner's is 0 (its virtual extent 1); extent 0: none */
  struct {
    int outer, inner;
    int64_t extent;
  } merge;
  /* Dims padded in segments (the RNN formats: each gate's hidden units, the
   * input rows apart from the hidden ones): x's virtual coordinate is x +
   * (padded - len) * min(x / len, count), segments of len elements, the
   * first count of them padded to padded; len 0: none */
  rl_segments seg[2];
  /* An integer tensor's quantization (value = (q - zero_point) * scale);
   * 1 and 0 for every other tensor (lib/reference/cast.c) */
  float scale;
  int32_t zero_point;
  /* Per-channel quantization instead, where per_channel is 1 + a logical
   * dim: channel c (the coordinate along it) has scale qscales[c] and zero
   * point qzps[c] (qzps NULL: 0), the caller's arrays; scale and zero_point
   * are then 1 and 0 */
  int per_channel;
  const float *qscales;
  const int32_t *qzps;
} rl_desc;
_Static_assert(sizeof(rl_desc) <= sizeof(relayout_desc),
               "relayout_desc has room for a descriptor");
_Static_assert(_Alignof(rl_desc) <= _Alignof(relayout_desc),
               "relayout_desc is aligned for a descriptor");
/* Whether d's virtual dims are other than its logical ones (grouped, or
 * two dims merged): no axis-by-axis map to another layout then. */
static inline int rl_remapped(const rl_desc *d) {
  return d->groups.groups || d->merge.extent || d->seg[0].len;
}
/* The caller's relayout_desc as the descriptor it holds. */
static inline const rl_desc *rl_cd(const relayout_desc *d) {
  return (const rl_desc *)(const void *)d;
}
static inline rl_desc *rl_md(relayout_desc *d) { return (rl_desc *)(void *)d; }

/* Layout kinds: where the physical axes come from. */
typedef enum rl_kind {
  RL_GRAMMAR,    /* pad/split/permute text, compact strides */
  RL_POSITIONAL, /* ND: row-major over whatever dims it is bound to */
  RL_CUTE,       /* (shape):(stride), explicit strides, fixed extents */
  RL_TPU         /* NPU-scattered local memory, strides from the seed */
} rl_kind;

/* One axis of grammar text: the outer part of a dim or an inner block. */
typedef struct rl_gaxis {
  char letter;     /* uppercase dim letter */
  int64_t block;   /* 0: outer part; else the block's size */
  int64_t align;   /* outer part only: 0, or pad to a multiple of this */
  int align_bytes; /* align counts bytes, not elements */
  int lower;       /* an outer part written lowercase */
} rl_gaxis;

/* Grammar text parsed: logical order is the one the text states ("MN:"
 * before it), else the order of the outer letters, or the alphabet's for a
 * oneDNN tag (letters a-l alone). */
typedef struct rl_grammar {
  int has_batch;
  int naxes;
  rl_gaxis axes[RELAYOUT_MAX_AXES];
  char order[RELAYOUT_MAX_DIMS + 1];
} rl_grammar;

/* A CuTe layout: each mode is one logical dim, split into sub-modes. */
typedef struct rl_cute {
  int nmodes;
  int64_t mode_extent[RELAYOUT_MAX_DIMS];
  int naxes;
  int mode[RELAYOUT_MAX_AXES]; /* which mode each sub-mode belongs to */
  int64_t extent[RELAYOUT_MAX_AXES];
  int64_t stride[RELAYOUT_MAX_AXES];
} rl_cute;

struct rl_format;

/* Named-format parameters; RL_UNSET where the format's default applies. */
#define RL_UNSET (-1)
enum {
  RL_P_C0,
  RL_P_B16,
  RL_P_GROUPS,
  RL_P_NPUS,
  RL_P_START,
  RL_P_LMEM,
  RL_P_W,
  RL_P_ALIGN,
  RL_P_OFFSET,
  RL_P_N0,
  RL_P_NSTRIDE,
  RL_P_CSTRIDE,
  RL_P_HSTRIDE,
  RL_P_WSTRIDE,
  RL_P_HEADS,
  RL_P_INPUT,
  RL_P_HIDDEN,
  RL_NPARAMS
};

struct relayout_layout {
  rl_kind kind;
  char text[128];
  const struct rl_format *format; /* NULL for plain grammar and CuTe text */
  int64_t param[RL_NPARAMS];
  rl_grammar grammar; /* RL_GRAMMAR without a format */
  rl_cute cute;       /* RL_CUTE */
};

/* ---- errors (status.c) */
relayout_status rl_fail(relayout_error *err, relayout_status status,
                        const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- grammar.c */
relayout_status rl_parse_grammar(rl_grammar *out, const char *text,
                                 relayout_error *err);
relayout_status rl_parse_cute(rl_cute *out, const char *text,
                              relayout_error *err);

/* ---- formats.c */
typedef enum rl_block_rule {
  RL_BLOCK_NONE,
  RL_BLOCK_CUBE,
  RL_BLOCK_B32
} rl_block_rule;
typedef struct rl_format {
  const char *name;
  const char *alias; /* NULL, or other names, comma-separated ("NZ,zN") */
  rl_kind kind;
  const char *order;     /* logical dim letters in logical order */
  const char *pattern;   /* grammar with {c0} {b16} {align} placeholders */
  rl_block_rule c0_rule; /* what {c0} is when no c0= is given */
  unsigned params;       /* bit per RL_P_* accepted */
  int stored_rank;       /* see rl_desc.stored_rank; 0: none */
  int merged_tail;       /* see rl_desc.merged_tail; 0: none */
  const char *merge;     /* see rl_desc.merge: its two dims' letters; NULL */
} rl_format;

const rl_format *rl_format_find(const char *name);
const char *rl_param_name(int param);
/* The named format closest to a misspelt name: within 1 edit (with
 * transpositions, read uppercase without underscores: FRACTALNZ is
 * FRACTAL_NZ), or 2 for a name of 6 characters or more; NULL if none. */
const char *rl_closest_format(const char *name);
/* The grammar a named format stands for at this dtype (RL_GRAMMAR kinds). */
relayout_status rl_format_grammar(rl_grammar *out, const relayout_layout *l,
                                  relayout_dtype dtype, relayout_error *err);
/* The grammar of any RL_GRAMMAR layout, named or not. */
relayout_status rl_layout_grammar(rl_grammar *out, const relayout_layout *l,
                                  relayout_dtype dtype, relayout_error *err);
int64_t rl_cube_c0(relayout_dtype dtype);
/* The bytes an element of dtype takes, 1 for 4-bit types: what buffers and
 * offsets are aligned to. */
size_t rl_unit(relayout_dtype dtype);
int64_t rl_b32(relayout_dtype dtype);

/* ---- tpu.c */
relayout_status rl_build_tpu(rl_desc *d, const relayout_layout *l,
                             relayout_error *err);

/* ---- reference.c: what every conversion checks first */
/* Both descriptors describe the same logical tensor. */
relayout_status rl_check_pair(const rl_desc *dst, const rl_desc *src,
                              relayout_error *err);
/* Both buffers are large enough. */
relayout_status rl_check_size(const rl_desc *d, size_t size, const char *which,
                              relayout_error *err);
relayout_status rl_check_sizes(const rl_desc *dst, size_t dst_size,
                               const rl_desc *src, size_t src_size,
                               relayout_error *err);

/* ---- cast.c: casts and quantization (docs/CASTS.md) */
/* Whether the pair changes values, not only places: dtypes or
 * quantization differ, or the destination's padding is a zero point. */
int rl_is_cast(const rl_desc *dst, const rl_desc *src);
/* Whether the pair's dtypes and quantization make a cast that has a
 * meaning; an error naming both where not. */
relayout_status rl_check_cast(const rl_desc *dst, const rl_desc *src,
                              relayout_error *err);
/* The element at logical coordinate coord, at src offset soff, cast,
 * written at dst offset doff (coord picks a per-channel quantization's
 * channel). */
void rl_cast_element(uint8_t *dst, int64_t doff, const rl_desc *d,
                     const uint8_t *src, int64_t soff, const rl_desc *s,
                     const int64_t *coord);
/* A side's quantization at logical coordinate coord: its channel's where it
 * is per channel. */
relayout_quant rl_quant_at(const rl_desc *d, const int64_t *coord);
/* The value of the float element at offset off of buf, of float type t. */
double rl_float_value(const uint8_t *buf, int64_t off, relayout_dtype t);
/* The byte every padding byte of dst holds: its zero point's (a nibble
 * twice for 4-bit types), else 0. */
uint8_t rl_pad_byte(const rl_desc *dst);
/* A float type's fraction bits and exponent bits; 0 for other types. */
int rl_float_bits(relayout_dtype t, int *exponent_bits);
/* An integer type's smallest and largest values; 0 for other types. */
int rl_int_range(relayout_dtype t, int64_t *lo, int64_t *hi);

/* ---- preprocessing (lib/preprocess/aipp.c) */
struct relayout_aipp;
/* The configuration (relayout_aipp_check) bound to output d: its logical
 * dims N, C, H, W (at[0..3]: where each is in d) of the extents the
 * configuration makes, a dtype f32 casts to; *frame: each frame's bytes. */
relayout_status rl_preprocess_check(const struct relayout_aipp *a,
                                    const rl_desc *d, int *at, int64_t *frame,
                                    relayout_error *err);
/* d's frames: its N extent. */
int64_t rl_preprocess_frames(const rl_desc *d);
/* The buffers hold d's N frames of `frame` bytes and d's layout. */
relayout_status rl_preprocess_sizes(const rl_desc *d, size_t dst_size,
                                    int64_t frame, size_t frames_size,
                                    relayout_error *err);

/* ---- the descriptor functions of relayout.h, on rl_desc (desc_api.c
 * wraps them) */
relayout_status rl_desc_init(rl_desc *out, const relayout_layout *layout,
                             relayout_dtype dtype, int ndims, const char *names,
                             const int64_t *dims, relayout_error *err);
relayout_status rl_bind(rl_desc *src, rl_desc *dst,
                        const relayout_layout *src_layout,
                        const relayout_layout *dst_layout, relayout_dtype dtype,
                        int src_rank, const int64_t *src_shape,
                        const relayout_dim_value *given, int ngiven,
                        relayout_error *err);
relayout_status rl_bind_extents(rl_desc *src, rl_desc *dst,
                                const relayout_layout *src_layout,
                                const relayout_layout *dst_layout,
                                relayout_dtype dtype, int n,
                                const int64_t *extents, relayout_error *err);
relayout_status rl_desc_offset(int64_t *out, const rl_desc *d,
                               const int64_t *coord, relayout_error *err);
relayout_status rl_desc_is_padding(int *out, const rl_desc *d, int64_t offset,
                                   relayout_error *err);
relayout_status rl_desc_size_bytes(int64_t *out, const rl_desc *d,
                                   relayout_error *err);
void rl_desc_physical_shape(int *rank, int64_t *shape, const rl_desc *d);
int rl_desc_holds_shape(const rl_desc *d, int rank, const int64_t *shape);
relayout_status rl_convert_ref(const rl_desc *dst, void *dst_buf,
                               size_t dst_size, const rl_desc *src,
                               const void *src_buf, size_t src_size,
                               relayout_error *err);

/* ---- desc.c: shared by the builders */
relayout_status rl_finish_desc(rl_desc *d, relayout_error *err);
/* The descriptor from its axes' origin: base 0, the span shortened by it
 * (what a kernel runs over; the base is an offset added to its buffer's). */
void rl_desc_unbase(rl_desc *d);
/* Virtual coordinates of a logical coordinate (grouped packing applied). */
void rl_virtual_coords(int64_t *v, const rl_desc *d, const int64_t *coord);
/* Offset straight from the axes; coord must be in range. */
int64_t rl_offset(const rl_desc *d, const int64_t *coord);

#endif /* RELAYOUT_INTERNAL_H */
