/* relayout.h - public API of relayout: tensor layout conversion
 *
 * A tensor is a set of named logical dims with extents, a dtype and a layout.
 * A layout maps every logical coordinate to an element offset in one linear
 * buffer (pad, split, permute, stride: see docs/LAYOUTS in the README).
 *
 * Flow: text -> relayout_layout (parsed, not yet sized) -> relayout_desc
 * (bound to extents and a dtype) -> conversion.
 *
 * Conventions: every function returns a relayout_status; output parameters
 * come first; an optional relayout_error receives a message naming what was
 * wrong (pass NULL to ignore it). The library never prints.
 *
 * Thread safety: relayout_layout handles are immutable after parse and
 * relayout_layout_set_param; distinct threads may use one handle for reads.
 * relayout_desc is a plain value; all query functions are reentrant.
 */
#ifndef RELAYOUT_H
#define RELAYOUT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What the shared library exports: the API alone (everything else is
 * compiled hidden). */
#if defined(__GNUC__)
#define RELAYOUT_API __attribute__((visibility("default")))
#else
#define RELAYOUT_API
#endif

/* The version: CMake, the command, the pkg-config file and the CMake
 * package read it from here. */
#define RELAYOUT_VERSION_MAJOR 0
#define RELAYOUT_VERSION_MINOR 2
#define RELAYOUT_VERSION_PATCH 0
#define RELAYOUT_VERSION_NUMBER                                                \
  (RELAYOUT_VERSION_MAJOR * 10000 + RELAYOUT_VERSION_MINOR * 100 +             \
   RELAYOUT_VERSION_PATCH)

/** Most logical dims of one tensor (named dims plus batch dims of `...`). */
#define RELAYOUT_MAX_DIMS 12
/** Most physical axes of one layout. */
#define RELAYOUT_MAX_AXES 24
/** Length of an error message buffer, terminator included. */
#define RELAYOUT_ERROR_LEN 256

typedef enum relayout_status {
  RELAYOUT_OK = 0,
  RELAYOUT_ERR_SYNTAX = 1,   /**< layout text or argument text ill-formed */
  RELAYOUT_ERR_UNKNOWN = 2,  /**< unknown format, parameter or dtype name */
  RELAYOUT_ERR_DIMS = 3,     /**< dims missing, mismatched or out of range */
  RELAYOUT_ERR_OVERFLOW = 4, /**< a size does not fit in 64 bits */
  RELAYOUT_ERR_BUFFER = 5,   /**< a buffer is smaller than its layout needs */
  RELAYOUT_ERR_UNSUPPORTED = 6, /**< valid request this build cannot serve */
  RELAYOUT_ERR_NOMEM = 7,       /**< memory allocation failed */
  RELAYOUT_ERR_IO = 8,          /**< reading or writing a file failed */
  RELAYOUT_ERR_FILE = 9, /**< a file is corrupt or of an unsupported kind */
  RELAYOUT_ERR_ARGUMENT = 10, /**< NULL pointer or out-of-range argument */
  RELAYOUT_ERR_BUSY = 11      /**< an engine in use by another thread */
} relayout_status;

/** A message naming what went wrong; filled by any failing call. */
typedef struct relayout_error {
  char message[RELAYOUT_ERROR_LEN];
} relayout_error;

/** Stable name of a status, e.g. "RELAYOUT_ERR_DIMS". */
RELAYOUT_API const char *relayout_status_name(relayout_status status);
/** The library's version, "MAJOR.MINOR.PATCH", as the header's macros give
 *  it when the library was built. */
RELAYOUT_API const char *relayout_version_string(void);
/** The same as a number, MAJOR * 10000 + MINOR * 100 + PATCH: a caller
 *  compares it with RELAYOUT_VERSION_NUMBER to find a library older than
 *  the header it was built with. */
RELAYOUT_API unsigned relayout_version_number(void);

/* ---------------------------------------------------------------- dtypes */

typedef enum relayout_dtype {
  RELAYOUT_BOOL,
  RELAYOUT_U8,
  RELAYOUT_I8,
  RELAYOUT_U16,
  RELAYOUT_I16,
  RELAYOUT_F16,
  RELAYOUT_BF16,
  RELAYOUT_U32,
  RELAYOUT_I32,
  RELAYOUT_F32,
  RELAYOUT_U64,
  RELAYOUT_I64,
  RELAYOUT_F64,
  RELAYOUT_I4,
  RELAYOUT_U4, /**< packed two per byte, low nibble first */
  RELAYOUT_DTYPE_COUNT
} relayout_dtype;

/** Bits per element: 4, 8, 16, 32 or 64 (bool is 8). */
RELAYOUT_API int relayout_dtype_bits(relayout_dtype dtype);
/** Short name ("f16", "i4", ...), or NULL for an invalid value. */
RELAYOUT_API const char *relayout_dtype_name(relayout_dtype dtype);
/** Looks a dtype up by its short name (case-insensitive). */
RELAYOUT_API relayout_status relayout_dtype_from_name(relayout_dtype *out,
                                                      const char *name,
                                                      relayout_error *err);

/* --------------------------------------------------------------- layouts */

/** A parsed layout: grammar text, a named format or a CuTe layout. */
typedef struct relayout_layout relayout_layout;

/**
 * Parses layout text: a named format of the catalogue ("FRACTAL_NZ",
 * "NC1HWC0(c0=8)", "FRACTAL_Z(groups=2)", "TPU_ALIGNED(npus=4,lmem=1024)"),
 * grammar text ("NCHW16c", "nChw8c", "...MN%32B") or a CuTe/TLA layout
 * ("((4,2),(4,3)):((4,16),(1,32))"). A number names a layout by CANN's
 * aclFormat (torch_npu's acl_format): relayout_acl_format gives the text.
 * The result is freed with relayout_layout_free.
 */
RELAYOUT_API relayout_status relayout_layout_parse(relayout_layout **out,
                                                   const char *text,
                                                   relayout_error *err);
/** A named format of the catalogue, as relayout_format_at lists it. */
typedef struct relayout_format_info {
  const char *name;  /**< "FRACTAL_NZ" */
  const char *alias; /**< other names, comma-separated ("NZ,zN"), or NULL */
  char params[64];   /**< the parameters it takes, space-separated: "c0 b16" */
} relayout_format_info;
/** The named format at index 0, 1, ...; RELAYOUT_ERR_ARGUMENT past the last. */
RELAYOUT_API relayout_status relayout_format_at(relayout_format_info *out,
                                                int index);

/**
 * The layout text CANN's aclFormat number names (0 "NCHW", 3 "NC1HWC0",
 * 12 "NC1HWC0(c0=4)", 29 "FRACTAL_NZ", 50 "FRACTAL_NZ(c0=16)", ...), or NULL
 * for a number that names none (ACL_FORMAT_UNDEFINED, -1, among them).
 */
RELAYOUT_API const char *relayout_acl_format(int number);
/** Frees a layout; accepts NULL. */
RELAYOUT_API void relayout_layout_free(relayout_layout *layout);
/**
 * Sets a named-format parameter after parsing (what the CLI's --c0 does).
 * Keys: "c0" (the dtype-dependent block), "b16" (the block that is 16 for
 * every dtype), "groups", "npus", "start", "lmem", "w", "align".
 * Fails with RELAYOUT_ERR_UNKNOWN when the layout has no such parameter.
 */
RELAYOUT_API relayout_status relayout_layout_set_param(relayout_layout *layout,
                                                       const char *key,
                                                       int64_t value,
                                                       relayout_error *err);
/** The canonical text of a layout, for messages ("NCHW16c", "ND", ...). */
RELAYOUT_API const char *relayout_layout_text(const relayout_layout *layout);
/**
 * The layout's text with every block size of a named format (c0, b16, align)
 * written out at its value for dtype: "FRACTAL_NZ" -> "FRACTAL_NZ(c0=16,
 * b16=16)" for f16. It parses back to the same layout whatever the defaults.
 * Other layouts give their text. Fails when the text needs more than room.
 */
RELAYOUT_API relayout_status relayout_layout_resolved_text(
    char *out, size_t room, const relayout_layout *layout, relayout_dtype dtype,
    relayout_error *err);

/**
 * The grammar text a layout stands for at dtype: a named format's pattern
 * with its blocks filled in ("NC1HWC0" at f16: "NCHW16c", at int8
 * "NCHW32c"), grammar text as written. ND, CuTe and TPU layouts have none
 * (RELAYOUT_ERR_UNSUPPORTED).
 */
RELAYOUT_API relayout_status relayout_layout_grammar_text(
    char *out, size_t room, const relayout_layout *layout, relayout_dtype dtype,
    relayout_error *err);

/* ----------------------------------------------------------- descriptors */

/**
 * One physical axis: the part of a (virtual) dim it indexes and its stride.
 * For a coordinate x of that dim the axis index is
 * ((x + pad_before[dim]) / weight) % extent.
 */
typedef struct relayout_axis {
  int dim;        /**< virtual dim index (see relayout_desc) */
  int64_t extent; /**< number of positions along the axis */
  int64_t weight; /**< divisor: product of the dim's blocks inside this one */
  int64_t stride; /**< in elements */
} relayout_axis;

/** A grouped FRACTAL_Z layout's block-diagonal packing (groups == 0: none). */
typedef struct relayout_groups {
  int64_t groups, e, cin, cout;
  int n_dim, c_dim; /**< logical dims holding out and in channels */
} relayout_groups;

/**
 * A tensor descriptor: a layout bound to logical extents and a dtype, with
 * the physical axes that follow. Opaque: made by relayout_desc_init or
 * relayout_bind, read with the relayout_desc_* queries below, a plain
 * value the caller copies and keeps as it likes (no free). Those two fill
 * it whole: descriptors of one conversion compare equal with memcmp.
 */
typedef struct relayout_desc {
  uint64_t opaque[256];
} relayout_desc;

/**
 * Binds a layout to logical extents and a dtype. names/dims list the logical
 * dims in the layout's logical order (relayout_layout_logical_names) with
 * batch dims of `...` first, named '0', '1', ...; a positional layout (ND,
 * CuTe) takes any names of the right rank.
 */
RELAYOUT_API relayout_status relayout_desc_init(
    relayout_desc *out, const relayout_layout *layout, relayout_dtype dtype,
    int ndims, const char *names, const int64_t *dims, relayout_error *err);

/**
 * The layout's own logical dim letters in logical order, NUL-terminated in
 * out (at least RELAYOUT_MAX_DIMS + 1 chars); *has_batch is 1 when the
 * layout starts with `...`; *positional is 1 for ND and CuTe layouts, whose
 * dims take the other side's names (out is then empty, or '0'.. for CuTe).
 */
RELAYOUT_API relayout_status relayout_layout_logical_names(
    char *out, int *has_batch, int *positional, const relayout_layout *layout,
    relayout_error *err);

/** A dim's name for messages: "C", or "d0" for positional dim 0; buf holds
 *  8 chars. */
RELAYOUT_API const char *relayout_dim_label(char *buf, char name);

/** Bytes a buffer in this layout needs (4-bit: rounded up to whole bytes). */
RELAYOUT_API relayout_status relayout_desc_size_bytes(int64_t *out,
                                                      const relayout_desc *d,
                                                      relayout_error *err);
/** Element offset of a logical coordinate (one entry per logical dim). */
RELAYOUT_API relayout_status relayout_desc_offset(int64_t *out,
                                                  const relayout_desc *d,
                                                  const int64_t *coord,
                                                  relayout_error *err);
/** *out = 1 when no logical coordinate maps to element offset `offset`. */
RELAYOUT_API relayout_status relayout_desc_is_padding(int *out,
                                                      const relayout_desc *d,
                                                      int64_t offset,
                                                      relayout_error *err);
/**
 * The array shape a buffer is stored with: the axis extents when the layout
 * is compact (the leading ones merged where CANN stores them so:
 * FRACTAL_Z's (C1*H*W, N1, N0, C0)), else one axis of span elements.
 * *rank receives its length.
 */
RELAYOUT_API void relayout_desc_physical_shape(int *rank, int64_t *shape,
                                               const relayout_desc *d);
/**
 * 1 when an array of this shape holds a buffer of the layout: the shape
 * relayout_desc_physical_shape gives, or, where the leading axes are stored
 * merged, one array axis per physical axis (FRACTAL_Z as 6 axes); else 0.
 */
RELAYOUT_API int relayout_desc_holds_shape(const relayout_desc *d, int rank,
                                           const int64_t *shape);
/**
 * d's buffer drawn as SVG text: a cell per element in physical order, in
 * rows of the second innermost axis's stride, each labelled with the
 * logical coordinate stored there ("3,17"), or with RELAYOUT_SVG_VALUES
 * its index in row-major logical order (as the seeds' tables print it);
 * padding shaded; a line where outer axes roll over, thicker the more of
 * them; where the outermost axis leaves gaps between its positions (a TPU
 * layout's NPUs), a band per position ("lane"); the axes listed. Past 64 rows
 * and 32 columns the rest is counted, not drawn; past 2^26 logical elements it
 * is refused. title (NULL: none) heads it. out NULL: *size receives the bytes
 * needed, the final NUL included; else out has *size bytes of room
 * (RELAYOUT_ERR_BUFFER if too few) and *size receives the bytes written.
 */
#define RELAYOUT_SVG_VALUES 1u
RELAYOUT_API relayout_status relayout_desc_svg(char *out, size_t *size,
                                               const relayout_desc *d,
                                               const char *title,
                                               unsigned flags,
                                               relayout_error *err);
/**
 * A bound pair (relayout_bind, relayout_bind_extents) drawn side by side as
 * relayout_desc_svg draws each, src left, dst right, headed by their
 * titles, with the paths of a few elements (the first, the last, the
 * middle one, the first of the last row) from their cells in src to theirs
 * in dst, where both are drawn. out and size as relayout_desc_svg's.
 */
RELAYOUT_API relayout_status
relayout_descs_svg(char *out, size_t *size, const relayout_desc *src,
                   const relayout_desc *dst, const char *src_title,
                   const char *dst_title, unsigned flags, relayout_error *err);
/** The descriptor's dtype. */
RELAYOUT_API relayout_dtype relayout_desc_dtype(const relayout_desc *d);
/** Its logical dims: their count, and (where not NULL) their names ('A'..'Z',
 *  or '0'+i for positional dims) and extents, RELAYOUT_MAX_DIMS room each. */
RELAYOUT_API int relayout_desc_dims(const relayout_desc *d, char *names,
                                    int64_t *extents);
/** Its physical axes, outermost (largest stride) first: their count, and
 *  (where not NULL) each, RELAYOUT_MAX_AXES room. */
RELAYOUT_API int relayout_desc_axes(const relayout_desc *d,
                                    relayout_axis *axes);
/** A virtual dim (see relayout_axis) and its padding. */
typedef struct relayout_vdim {
  char name;          /**< the logical dim's, or 'G' for a group block */
  int64_t valid;      /**< extent that holds data */
  int64_t padded;     /**< extent in the buffer, pad_before included */
  int64_t pad_before; /**< positions of padding before the data */
} relayout_vdim;
/** Its virtual dims: their count, and (where not NULL) each, room for
 *  RELAYOUT_MAX_DIMS + 1. */
RELAYOUT_API int relayout_desc_vdims(const relayout_desc *d,
                                     relayout_vdim *vdims);
/** A grouped FRACTAL_Z's packing: 1 with *out filled, else 0. */
RELAYOUT_API int relayout_desc_groups(const relayout_desc *d,
                                      relayout_groups *out);
/** Elements from offset 0 past the last addressable one. */
RELAYOUT_API int64_t relayout_desc_span(const relayout_desc *d);
/** Elements before the axes' origin: an element's offset is this plus its
 * coordinates times the axes' strides (a TPU tensor's offset= inside its
 * NPU, in elements); 0 for every other layout. */
RELAYOUT_API int64_t relayout_desc_base(const relayout_desc *d);
/** 1 when no gap lies between the axes (the physical shape is the axes). */
RELAYOUT_API int relayout_desc_is_compact(const relayout_desc *d);
/** An integer tensor's quantization: element q stands for the value
 *  (q - zero_point) * scale (docs/CASTS.md). */
typedef struct relayout_quant {
  float scale;        /**< positive and finite */
  int32_t zero_point; /**< within the dtype's range */
} relayout_quant;

/**
 * Rebinds d, bound from `layout`, to another dtype with the same logical
 * extents (the blocks a layout sizes by dtype follow: NC1HWC0's C0 is 16
 * for f16, 32 for i8), and an integer dtype (i8, u8, i4, u4) to `quant`
 * (NULL: scale 1, zero point 0). A destination of another dtype than its
 * source makes the conversion a cast: every element is converted as
 * docs/CASTS.md defines, by the reference and by the devices alike, and
 * the padding of a quantized destination is its zero point. It binds d
 * afresh: a relayout_desc_column_major before it is undone.
 */
RELAYOUT_API relayout_status relayout_desc_retype(relayout_desc *d,
                                                  const relayout_layout *layout,
                                                  relayout_dtype dtype,
                                                  const relayout_quant *quant,
                                                  relayout_error *err);
/** Per-channel quantization (docs/CASTS.md): the element q whose
 *  coordinate along logical dim `dim` is c stands for the value
 *  (q - zero_points[c]) * scales[c]. */
typedef struct relayout_quant_channels {
  char dim;                   /**< the logical dim's letter ('0'+i: ND) */
  int64_t count;              /**< the arrays' length: that dim's extent */
  const float *scales;        /**< each positive and finite */
  const int32_t *zero_points; /**< each in the dtype's range; NULL: all 0 */
} relayout_quant_channels;

/**
 * Gives an integer descriptor (i8, u8, i4, u4) a quantization per channel
 * along one logical dim, in place of its per-tensor one. d keeps the
 * arrays' addresses, not copies: they must stay unchanged while d, its
 * copies and the conversions made from them are in use (a plan copies them
 * when it is made). A cast quantizes into such a destination or
 * dequantizes from such a source; its padding is the integer 0 (the
 * channel dim's own padding has no channel). Errors name a wrong dim or
 * length and the first bad scale or zero point by index.
 */
RELAYOUT_API relayout_status relayout_desc_quantize_channels(
    relayout_desc *d, const relayout_quant_channels *q, relayout_error *err);
/**
 * Symmetric quantization scales of the float tensor buf (of layout src) for
 * the signed type `to` (i8 or i4), zero point 0: per channel along logical
 * dim `dim` (count scales, its extent), or for the whole tensor (dim 0,
 * count 1). Each is the largest finite |x| of its channel divided by the
 * type's largest value (127, 7), in f64, rounded once to f32 (at least the
 * smallest positive f32); a channel without a nonzero finite value has
 * scale 1. NaNs and infinities do not count (they quantize to 0 and
 * saturate).
 */
RELAYOUT_API relayout_status relayout_symmetric_scales(
    float *scales, int64_t count, const relayout_desc *src, const void *buf,
    size_t size, char dim, relayout_dtype to, relayout_error *err);
/**
 * Re-strides a compact descriptor column-major, its first physical axis
 * fastest: the layout of a Fortran-order array of the same physical shape
 * (a .npy file saved so). Fails for a layout with gaps.
 */
RELAYOUT_API relayout_status relayout_desc_column_major(relayout_desc *d,
                                                        relayout_error *err);

/* ------------------------------------------------------------ conversion */

/** A logical extent given by dim letter, e.g. {'C', 17}. */
typedef struct relayout_dim_value {
  char name;
  int64_t extent;
} relayout_dim_value;

/**
 * Binds both sides of a conversion. The logical extents come from the source
 * array shape (src_shape, rank src_rank, as relayout_desc_physical_shape
 * would give it), from `given` (by letter) and from CuTe layouts' own
 * shapes. An extent that padding hides must be given: it is never guessed
 * (the message lists every one missing, as the command line's --dims).
 * Letters bind by name; ND and CuTe bind by position to the other side.
 * Both descriptors list the logical dims in the same order.
 */
RELAYOUT_API relayout_status relayout_bind(
    relayout_desc *src, relayout_desc *dst, const relayout_layout *src_layout,
    const relayout_layout *dst_layout, relayout_dtype dtype, int src_rank,
    const int64_t *src_shape, const relayout_dim_value *given, int ngiven,
    relayout_error *err);

/**
 * Binds both sides of a conversion from logical extents listed in the source
 * layout's logical order (relayout_layout_logical_names), batch dims of
 * `...` first; a positional source (ND, CuTe) takes them in its own order.
 * The same as relayout_bind for a source array of exactly those extents.
 */
RELAYOUT_API relayout_status relayout_bind_extents(
    relayout_desc *src, relayout_desc *dst, const relayout_layout *src_layout,
    const relayout_layout *dst_layout, relayout_dtype dtype, int n,
    const int64_t *extents, relayout_error *err);

/**
 * The scalar reference conversion: every destination element is its source
 * element, bit for bit (or cast, where the dtypes or quantizations differ:
 * relayout_desc_retype), or zero where no logical coordinate maps to it.
 * Computed per element straight from both descriptors; it is the oracle the
 * device paths are tested against. Buffers must not overlap.
 */
RELAYOUT_API relayout_status
relayout_convert_ref(const relayout_desc *dst, void *dst_buf, size_t dst_size,
                     const relayout_desc *src, const void *src_buf,
                     size_t src_size, relayout_error *err);

/* ------------------------------------------------------- devices, plans */

/** One OpenCL device as relayout_device_list reports it. */
typedef struct relayout_device_info {
  char name[128];
  char platform[128];
  char opencl_c[64]; /**< e.g. "OpenCL C 1.2 PoCL" */
  int is_gpu;
  unsigned compute_units;
  uint64_t global_mem; /**< bytes */
  uint64_t max_alloc;  /**< bytes */
} relayout_device_info;

/**
 * Lists every device of every OpenCL platform, in the order that device
 * indexes use. *count receives the number of devices (0 without OpenCL);
 * at most `room` entries are written to out (NULL with room 0: count only).
 * *autopick receives the index `auto` picks (-1: the reference).
 */
RELAYOUT_API relayout_status relayout_device_list(relayout_device_info *out,
                                                  int room, int *count,
                                                  int *autopick,
                                                  relayout_error *err);

/** Which kernels an engine's plans take. */
typedef enum relayout_families {
  RELAYOUT_FAMILIES_AUTO, /**< those of the device's kind */
  RELAYOUT_FAMILIES_GPU,  /**< the GPU families on any device (tests, tuning) */
  RELAYOUT_FAMILIES_CPU   /**< the CPU boxes on any device (tests, tuning) */
} relayout_families;

/**
 * How an engine is made. Every field's zero is its default, so a caller
 * sets the size and what differs:
 *
 *     relayout_engine_options o = {.size = sizeof o, .device = "cpu"};
 *
 * `size` is sizeof(relayout_engine_options) as the caller was built: a
 * later version adds fields at the end, which callers built before leave at
 * their defaults. The library reads no environment variable; the relayout
 * command maps its RELAYOUT_* variables onto these fields.
 */
/**
 * Which kernel a plan runs. A plan's own kernel is specialised: its extents,
 * strides and box sizes compiled in, as fast as the device goes, but a new
 * shape is a new program to compile (about a second on PoCL). The generic
 * kernels take them as arguments: one program per device and driver, kept
 * in the disk cache like the rest, serves every plan at once.
 */
typedef enum relayout_kernels {
  /** The specialised kernel where it is compiled already (in the engine or
   *  its disk cache); else the generic kernel at once, while the specialised
   *  one builds in the background; the plan switches to it at its first run
   *  after the build, and the build lands in the disk cache. */
  RELAYOUT_KERNELS_AUTO,
  /** The specialised kernel, built when the plan is created. */
  RELAYOUT_KERNELS_SPECIALISED,
  /** The generic kernels only (tests, benchmarks). */
  RELAYOUT_KERNELS_GENERIC,
  /** The specialised kernel where it is compiled already (in the engine or
   *  its disk cache), else the generic kernel; nothing builds in the
   *  background, and of the programs built only those of plans without a
   *  generic kernel (casts to and from 4-bit types), built when made, are
   *  stored: for a run that leaves the building to another process
   *  (relayout repack's background --warm). */
  RELAYOUT_KERNELS_CACHED
} relayout_kernels;

typedef struct relayout_engine_options {
  size_t size;
  /** "auto" (or NULL: the first GPU, else a CPU device, else the
   *  reference), "gpu", "cpu", "ref", an index of relayout_device_list, or
   *  a substring of a device name. */
  const char *device;
  /** A directory that keeps compiled programs across processes, keyed by
   *  device, driver and source (created if missing; NULL: none). An entry
   *  that fails its checksum, or that the driver refuses, is rebuilt. */
  const char *cache_dir;
  /** The directory's bound in bytes (0: 256 MiB): a store that takes the
   *  entries past it removes the least recently used (loading one uses it)
   *  until they fit in three quarters of it. */
  int64_t cache_bytes;
  /** Lowers the device's largest allocation to this many bytes (0: the
   *  device's own): how tests reach the slab path. */
  int64_t max_alloc;
  /** 1: upload and download even where the device works in host memory,
   *  as on a discrete GPU (tests). */
  int copies;
  relayout_families families;
  /** CPU plans write destinations of this many bytes or more with
   *  non-temporal stores (0: 0.3 of the device's cache, the streaming
   *  threshold; -1: never). */
  int64_t stream_bytes;
  /** Which kernels plans run (default: RELAYOUT_KERNELS_AUTO). */
  relayout_kernels kernels;
  /** Background builds at once (0: 1 on a CPU device, whose PoCL compiler
   *  builds one program at a time, else one per CPU up to 8; -1: none, so
   *  that AUTO builds each plan's kernel when the plan is created). Builder
   *  threads run at the lowest priority. */
  int build_threads;
  /** 1: a build still queued when its plan is freed finishes into the
   *  cache, and relayout_engine_free waits for it, so that the next run of
   *  the same conversions (a second repack of a checkpoint) finds every
   *  kernel; 0 (default): it is dropped, and the engine waits only for the
   *  builds under way (a matrix of one-off conversions exits at once). */
  int finish_builds;
  /** Host arrays reach a device that does not work in host memory through
   *  four pinned chunks of this many bytes (0: 8 MiB): how tests reach
   *  arrays of many chunks. */
  int64_t staging_bytes;
} relayout_engine_options;

/**
 * An engine: one device, its context, queue and compiled-program cache, or
 * the scalar reference, as the options say (NULL: every default). Where
 * "auto" finds no OpenCL device, the engine is the reference and
 * relayout_engine_note says so.
 * Thread safety: engines may be created and freed from any thread at once;
 * an engine and its plans are used by one thread at a time: a call that
 * finds another thread inside the same engine (creating or running a plan,
 * enqueueing) fails with RELAYOUT_ERR_BUSY and changes nothing.
 */
typedef struct relayout_engine relayout_engine;
RELAYOUT_API relayout_status relayout_engine_create(
    relayout_engine **out, const relayout_engine_options *options,
    relayout_error *err);
/** Frees an engine (its plans must be freed first); accepts NULL. Builds
 *  under way (and, with finish_builds, queued) finish first, into the disk
 *  cache. */
RELAYOUT_API void relayout_engine_free(relayout_engine *engine);
/** The device's name, or "reference". */
RELAYOUT_API const char *relayout_engine_device(const relayout_engine *engine);
/** Why the engine runs on the reference though "auto" asked for a device,
 *  or "". */
RELAYOUT_API const char *relayout_engine_note(const relayout_engine *engine);
/** How many programs this engine built from source and loaded from the disk
 *  cache so far (a warm cache builds none). */
RELAYOUT_API void relayout_engine_builds(const relayout_engine *engine,
                                         int *from_source, int *from_disk);
/** How many background builds the engine has not finished: queued or under
 *  way. relayout_engine_free waits for those under way, and with
 *  finish_builds for the queue too. */
RELAYOUT_API int relayout_engine_pending_builds(relayout_engine *engine);

/**
 * A plan: one conversion for one engine. Creating it finds its specialised
 * kernel in the engine's caches, or (options.kernels) builds it, or runs
 * the generic kernel while it builds in the background; running it compiles
 * nothing. When no kernel can be built the plan runs on the reference, and
 * relayout_plan_note says why.
 */
typedef struct relayout_plan relayout_plan;
RELAYOUT_API relayout_status relayout_plan_create(relayout_plan **out,
                                                  relayout_engine *engine,
                                                  const relayout_desc *dst,
                                                  const relayout_desc *src,
                                                  relayout_error *err);
/** Frees a plan; accepts NULL. */
RELAYOUT_API void relayout_plan_free(relayout_plan *plan);
/** How the plan's specialised kernel runs: "copy", "rows", "stage",
 *  "gather" (GPU families), "lines" (CPU devices), or "reference"; a cast
 *  runs in "stage", "lines" or "gather" (docs/CASTS.md). */
RELAYOUT_API const char *relayout_plan_family(const relayout_plan *plan);
/**
 * Why the plan's work was done by the reference, or "": its kernel could
 * not be built (from its creation on), or its last run (relayout_plan_run,
 * or a batch it was in) fell back, in any slab of it. The one place a
 * fallback is told: the library never prints.
 */
RELAYOUT_API const char *relayout_plan_note(const relayout_plan *plan);
/** The OpenCL C source of the plan's specialised kernel, or "" for the
 *  reference and copies. */
RELAYOUT_API const char *relayout_plan_source(const relayout_plan *plan);
/** The kernel the plan's next run takes: "specialised", "generic", "copy"
 *  (clEnqueueCopyBuffer) or "reference". */
RELAYOUT_API const char *relayout_plan_kernel(const relayout_plan *plan);
/**
 * Waits until the plan's specialised kernel is built and switches to it
 * (at once where it has no build under way). A build that fails leaves the
 * plan on its generic kernel (relayout_plan_kernel says which runs);
 * RELAYOUT_OK either way.
 */
RELAYOUT_API relayout_status relayout_plan_wait(relayout_plan *plan,
                                                relayout_error *err);

/**
 * Runs a plan on host memory and returns when dst holds the result. On a
 * device that works in host memory (PoCL's CPU device) the kernel reads src
 * and writes dst in place where the array is aligned to the unit the kernel
 * moves (its element, or several elements moved as one: NCHW4 -> CHWN4
 * moves each pixel's 4 int8 channels as a 4-byte word; a misaligned array
 * is copied), at full speed where both start on a cache line (64 bytes);
 * other devices upload src and download into dst. Overlapping
 * buffers are refused. The sizes are checked as in relayout_convert_ref.
 * Buffers beyond the device's largest allocation run in slabs of a dim
 * outermost in both layouts. If the device fails (out of memory, say), or no
 * such dim exists whose slabs fit, the reference does the work and
 * relayout_plan_note says why. It is relayout_plans_run with one job.
 */
RELAYOUT_API relayout_status relayout_plan_run(relayout_plan *plan, void *dst,
                                               size_t dst_size, const void *src,
                                               size_t src_size,
                                               relayout_error *err);

/** One conversion of a batch: a plan and its host arrays, as the arguments
 *  of relayout_plan_run. */
typedef struct relayout_job {
  relayout_plan *plan;
  void *dst;
  size_t dst_size;
  const void *src;
  size_t src_size;
} relayout_job;

/**
 * Runs many plans of one engine on host memory, as relayout_plan_run runs
 * each, and returns when every dst holds its result: a model's weights, say.
 * The jobs' transfers and kernels are enqueued back to back and waited on
 * once per group (consecutive jobs whose device-side copies fit in the
 * device's largest allocation together; arrays that a device working in
 * host memory uses in place take no room), so a small tensor costs no
 * launch-and-wait round trip of its own. Every job is checked
 * before any runs, and a bad one fails the call with nothing written and a
 * message naming it ("job 3: ..."): NULL arrays, a plan of another engine,
 * a buffer too small, or a destination that overlaps any job's array
 * (sources may overlap one another). A job on the reference, or beyond the
 * largest allocation, runs alone as relayout_plan_run runs it. If the
 * device fails a group, the reference does that group's work, and each of
 * its plans' notes names the jobs. njobs 0 does nothing.
 */
RELAYOUT_API relayout_status relayout_plans_run(const relayout_job *jobs,
                                                int njobs, relayout_error *err);

#ifdef __cplusplus
}
#endif
#endif /* RELAYOUT_H */
