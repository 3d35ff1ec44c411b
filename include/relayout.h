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

/* The version: CMake and the command read it from here. */
#define RELAYOUT_VERSION_MAJOR 0
#define RELAYOUT_VERSION_MINOR 2
#define RELAYOUT_VERSION_PATCH 0

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
  RELAYOUT_ERR_FILE = 9,     /**< a file is corrupt or of an unsupported kind */
  RELAYOUT_ERR_ARGUMENT = 10 /**< NULL pointer or out-of-range argument */
} relayout_status;

/** A message naming what went wrong; filled by any failing call. */
typedef struct relayout_error {
  char message[RELAYOUT_ERROR_LEN];
} relayout_error;

/** Stable name of a status, e.g. "RELAYOUT_ERR_DIMS". */
const char *relayout_status_name(relayout_status status);
/** The library's version, "MAJOR.MINOR.PATCH", as the header's macros give
 *  it when the library was built. */
const char *relayout_version_string(void);

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
int relayout_dtype_bits(relayout_dtype dtype);
/** Short name ("f16", "i4", ...), or NULL for an invalid value. */
const char *relayout_dtype_name(relayout_dtype dtype);
/** Looks a dtype up by its short name (case-insensitive). */
relayout_status relayout_dtype_from_name(relayout_dtype *out, const char *name,
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
relayout_status relayout_layout_parse(relayout_layout **out, const char *text,
                                      relayout_error *err);
/** A named format of the catalogue, as relayout_format_at lists it. */
typedef struct relayout_format_info {
  const char *name;  /**< "FRACTAL_NZ" */
  const char *alias; /**< "NZ", or NULL */
  char params[64];   /**< the parameters it takes, space-separated: "c0 b16" */
} relayout_format_info;
/** The named format at index 0, 1, ...; RELAYOUT_ERR_ARGUMENT past the last. */
relayout_status relayout_format_at(relayout_format_info *out, int index);

/**
 * The layout text CANN's aclFormat number names (0 "NCHW", 3 "NC1HWC0",
 * 12 "NC1HWC0(c0=4)", 29 "FRACTAL_NZ", 50 "FRACTAL_NZ(c0=16)", ...), or NULL
 * for a number that names none (ACL_FORMAT_UNDEFINED, -1, among them).
 */
const char *relayout_acl_format(int number);
/** Frees a layout; accepts NULL. */
void relayout_layout_free(relayout_layout *layout);
/**
 * Sets a named-format parameter after parsing (what the CLI's --c0 does).
 * Keys: "c0" (the dtype-dependent block), "b16" (the block that is 16 for
 * every dtype), "groups", "npus", "start", "lmem", "w", "align".
 * Fails with RELAYOUT_ERR_UNKNOWN when the layout has no such parameter.
 */
relayout_status relayout_layout_set_param(relayout_layout *layout,
                                          const char *key, int64_t value,
                                          relayout_error *err);
/** The canonical text of a layout, for messages ("NCHW16c", "ND", ...). */
const char *relayout_layout_text(const relayout_layout *layout);
/**
 * The layout's text with every block size of a named format (c0, b16, align)
 * written out at its value for dtype: "FRACTAL_NZ" -> "FRACTAL_NZ(c0=16,
 * b16=16)" for f16. It parses back to the same layout whatever the defaults.
 * Other layouts give their text. Fails when the text needs more than room.
 */
relayout_status relayout_layout_resolved_text(char *out, size_t room,
                                              const relayout_layout *layout,
                                              relayout_dtype dtype,
                                              relayout_error *err);

/**
 * The grammar text a layout stands for at dtype: a named format's pattern
 * with its blocks filled in ("NC1HWC0" at f16: "NCHW16c", at int8
 * "NCHW32c"), grammar text as written. ND, CuTe and TPU layouts have none
 * (RELAYOUT_ERR_UNSUPPORTED).
 */
relayout_status relayout_layout_grammar_text(char *out, size_t room,
                                             const relayout_layout *layout,
                                             relayout_dtype dtype,
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
 * A tensor descriptor: logical dims, dtype and the physical axes of its
 * layout. Virtual dims are the logical dims, except in a grouped layout where
 * dims n_dim and c_dim hold the packed out/in channel and one more virtual
 * dim (index ndims) holds the group block.
 * Axes are sorted outermost (largest stride) first.
 */
typedef struct relayout_desc {
  relayout_dtype dtype;
  int ndims;
  char names[RELAYOUT_MAX_DIMS]; /**< 'A'..'Z', or '0'+i for positional dims */
  int64_t dims[RELAYOUT_MAX_DIMS];
  int nvdims;
  int64_t vdims[RELAYOUT_MAX_DIMS + 1]; /**< valid extent per virtual dim */
  int64_t
      padded[RELAYOUT_MAX_DIMS + 1]; /**< padded extent, pad_before included */
  int64_t pad_before[RELAYOUT_MAX_DIMS + 1];
  int naxes;
  relayout_axis axes[RELAYOUT_MAX_AXES];
  relayout_groups groups;
  int compact;  /**< 1: no gaps between axes, the physical shape is the axes */
  int64_t span; /**< elements from offset 0 past the last addressable one */
  /** The array axes a compact buffer is stored in, its leading physical axes
   *  merged into one: 4 for FRACTAL_Z (C1*H*W, N1, N0, C0) and FRACTAL_Z_3D
   *  (D*C1*H*W, N1, N0, C0), as CANN stores them; 0: one per axis. */
  int stored_rank;
} relayout_desc;

/**
 * Binds a layout to logical extents and a dtype. names/dims list the logical
 * dims in the layout's logical order (relayout_layout_logical_names) with
 * batch dims of `...` first, named '0', '1', ...; a positional layout (ND,
 * CuTe) takes any names of the right rank.
 */
relayout_status relayout_desc_init(relayout_desc *out,
                                   const relayout_layout *layout,
                                   relayout_dtype dtype, int ndims,
                                   const char *names, const int64_t *dims,
                                   relayout_error *err);

/**
 * The layout's own logical dim letters in logical order, NUL-terminated in
 * out (at least RELAYOUT_MAX_DIMS + 1 chars); *has_batch is 1 when the
 * layout starts with `...`; *positional is 1 for ND and CuTe layouts, whose
 * dims take the other side's names (out is then empty, or '0'.. for CuTe).
 */
relayout_status relayout_layout_logical_names(char *out, int *has_batch,
                                              int *positional,
                                              const relayout_layout *layout,
                                              relayout_error *err);

/** A dim's name for messages: "C", or "d0" for positional dim 0; buf holds
 *  8 chars. */
const char *relayout_dim_label(char *buf, char name);

/** Bytes a buffer in this layout needs (4-bit: rounded up to whole bytes). */
relayout_status relayout_desc_size_bytes(int64_t *out, const relayout_desc *d,
                                         relayout_error *err);
/** Element offset of a logical coordinate (coord has d->ndims entries). */
relayout_status relayout_desc_offset(int64_t *out, const relayout_desc *d,
                                     const int64_t *coord, relayout_error *err);
/** *out = 1 when no logical coordinate maps to element offset `offset`. */
relayout_status relayout_desc_is_padding(int *out, const relayout_desc *d,
                                         int64_t offset, relayout_error *err);
/**
 * The array shape a buffer is stored with: the axis extents when the layout
 * is compact (the leading ones merged down to d->stored_rank axes where it
 * is set: FRACTAL_Z's (C1*H*W, N1, N0, C0)), else one axis of span
 * elements. *rank receives its length.
 */
void relayout_desc_physical_shape(int *rank, int64_t *shape,
                                  const relayout_desc *d);
/**
 * 1 when an array of this shape holds a buffer of the layout: the shape
 * relayout_desc_physical_shape gives, or, where the leading axes are stored
 * merged, one array axis per physical axis (FRACTAL_Z as 6 axes); else 0.
 */
int relayout_desc_holds_shape(const relayout_desc *d, int rank,
                              const int64_t *shape);

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
relayout_status relayout_bind(relayout_desc *src, relayout_desc *dst,
                              const relayout_layout *src_layout,
                              const relayout_layout *dst_layout,
                              relayout_dtype dtype, int src_rank,
                              const int64_t *src_shape,
                              const relayout_dim_value *given, int ngiven,
                              relayout_error *err);

/**
 * Binds both sides of a conversion from logical extents listed in the source
 * layout's logical order (relayout_layout_logical_names), batch dims of
 * `...` first; a positional source (ND, CuTe) takes them in its own order.
 * The same as relayout_bind for a source array of exactly those extents.
 */
relayout_status relayout_bind_extents(relayout_desc *src, relayout_desc *dst,
                                      const relayout_layout *src_layout,
                                      const relayout_layout *dst_layout,
                                      relayout_dtype dtype, int n,
                                      const int64_t *extents,
                                      relayout_error *err);

/**
 * The scalar reference conversion: every destination element is its source
 * element, bit for bit, or zero where no logical coordinate maps to it.
 * Computed per element straight from both descriptors; it is the oracle the
 * device paths are tested against. Buffers must not overlap.
 */
relayout_status relayout_convert_ref(const relayout_desc *dst, void *dst_buf,
                                     size_t dst_size, const relayout_desc *src,
                                     const void *src_buf, size_t src_size,
                                     relayout_error *err);

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
relayout_status relayout_device_list(relayout_device_info *out, int room,
                                     int *count, int *autopick,
                                     relayout_error *err);

/**
 * An engine: one device, its context, queue and compiled-program cache, or
 * the scalar reference. `device` is "auto" (the first GPU, else a CPU
 * device, else the reference), "gpu", "cpu", "ref", a device index, or a
 * substring of a device name; NULL means the RELAYOUT_DEVICE environment
 * variable, else "auto". When `auto` falls back to the reference,
 * *note (if not NULL) receives a one-line reason; otherwise it is emptied.
 * Thread safety: an engine and its plans are used by one thread at a time.
 */
typedef struct relayout_engine relayout_engine;
relayout_status relayout_engine_create(relayout_engine **out,
                                       const char *device, relayout_error *note,
                                       relayout_error *err);
/** Frees an engine (its plans must be freed first); accepts NULL. */
void relayout_engine_free(relayout_engine *engine);
/** The device's name, or "reference". */
const char *relayout_engine_device(const relayout_engine *engine);
/** How many programs this engine built from source and loaded from the disk
 *  cache so far (a warm cache builds none). */
void relayout_engine_builds(const relayout_engine *engine, int *from_source,
                            int *from_disk);

/**
 * A plan: one conversion, specialised and compiled for one engine. Creating
 * it builds (or loads from cache) its kernel; running it compiles nothing.
 * Program binaries are cached on disk in RELAYOUT_CACHE_DIR, else
 * $XDG_CACHE_HOME/relayout, else ~/.cache/relayout (RELAYOUT_CACHE_DIR=off:
 * none); a corrupt or stale entry is rebuilt. The entries are kept under
 * RELAYOUT_CACHE_MB MiB (default 256), the least recently used removed
 * first. When the kernel cannot be built the plan falls back to the
 * reference and relayout_plan_note says why.
 */
typedef struct relayout_plan relayout_plan;
relayout_status relayout_plan_create(relayout_plan **out,
                                     relayout_engine *engine,
                                     const relayout_desc *dst,
                                     const relayout_desc *src,
                                     relayout_error *err);
/** Frees a plan; accepts NULL. */
void relayout_plan_free(relayout_plan *plan);
/** How the plan runs: "copy", "rows", "stage", "gather" (GPU families),
 *  "lines" (CPU devices), or "reference". */
const char *relayout_plan_family(const relayout_plan *plan);
/** Why a plan runs on the reference though its engine has a device, or "". */
const char *relayout_plan_note(const relayout_plan *plan);
/** The OpenCL C source of the plan's kernel, or "" for the reference. */
const char *relayout_plan_source(const relayout_plan *plan);

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
 * such dim exists whose slabs fit, the reference does the work and *note
 * says why. It is relayout_plans_run with one job.
 */
relayout_status relayout_plan_run(relayout_plan *plan, void *dst,
                                  size_t dst_size, const void *src,
                                  size_t src_size, relayout_error *note,
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
 * device fails a group, the reference does that group's work and *note
 * names the jobs; *note keeps the first such reason. njobs 0 does nothing.
 */
relayout_status relayout_plans_run(const relayout_job *jobs, int njobs,
                                   relayout_error *note, relayout_error *err);

/* ------------------------------------------------------------------ .npy */

/** What a .npy header says; data_offset is where the array bytes begin. */
typedef struct relayout_npy_info {
  char descr[16];    /**< e.g. "<f2", "|u1", "<V2" */
  int elem_size;     /**< bytes per element */
  int fortran_order; /**< 1: column-major data */
  int rank;
  int64_t shape[RELAYOUT_MAX_AXES];
  int64_t data_offset;
  int64_t data_size;
} relayout_npy_info;

/**
 * Parses a .npy file held in memory (versions 1-3, little-endian or 1-byte
 * types, plain dtypes). Checks that the data is exactly as long as the shape
 * says: a short or padded file is an error.
 */
relayout_status relayout_npy_parse(relayout_npy_info *out, const void *file,
                                   size_t size, relayout_error *err);
/**
 * Parses the start of a .npy file: its prefix and header, which the first
 * `size` bytes must hold (10 or 12 bytes of prefix, then the header length
 * they give). Fills everything relayout_npy_parse does, the data's size and
 * offset included, without looking at the data: for a file read as a
 * stream, whose length is learnt from its header. Where the bytes hold the
 * prefix but not the whole header, it fails with RELAYOUT_ERR_BUFFER and sets
 * only out->data_offset: the bytes it needs.
 */
relayout_status relayout_npy_parse_header(relayout_npy_info *out,
                                          const void *head, size_t size,
                                          relayout_error *err);
/**
 * Writes a .npy header (version 1, or 2 when it needs more room) for a
 * C-order array; with out == NULL only *len is set. *len is in/out: the room
 * in out, then the header length.
 */
relayout_status relayout_npy_header(char *out, size_t *len, const char *descr,
                                    int rank, const int64_t *shape,
                                    relayout_error *err);
/** The dtype a .npy descr holds ("<f2" -> f16); V2 and u2 need an override. */
relayout_status relayout_npy_dtype(relayout_dtype *out, const char *descr,
                                   relayout_error *err);
/** The .npy descr for a dtype ("<f2"); bf16 is "<V2". 4-bit has none. */
relayout_status relayout_npy_descr(const char **out, relayout_dtype dtype,
                                   relayout_error *err);

#ifdef __cplusplus
}
#endif
#endif /* RELAYOUT_H */
