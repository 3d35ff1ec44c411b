/* relayout_npy.h - .npy files: their headers read and written
 *
 * What the relayout command reads and writes arrays with; numpy's format
 * (versions 1-3), little-endian or 1-byte types, plain dtypes.
 */
#ifndef RELAYOUT_NPY_H
#define RELAYOUT_NPY_H

#include "relayout.h"

#ifdef __cplusplus
extern "C" {
#endif

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
RELAYOUT_API relayout_status relayout_npy_parse(relayout_npy_info *out,
                                                const void *file, size_t size,
                                                relayout_error *err);
/**
 * Parses the start of a .npy file: its prefix and header, which the first
 * `size` bytes must hold (10 or 12 bytes of prefix, then the header length
 * they give). Fills everything relayout_npy_parse does, the data's size and
 * offset included, without looking at the data: for a file read as a
 * stream, whose length is learnt from its header. Where the bytes hold the
 * prefix but not the whole header, it fails with RELAYOUT_ERR_BUFFER and sets
 * only out->data_offset: the bytes it needs.
 */
RELAYOUT_API relayout_status relayout_npy_parse_header(relayout_npy_info *out,
                                                       const void *head,
                                                       size_t size,
                                                       relayout_error *err);
/**
 * Writes a .npy header (version 1, or 2 when it needs more room) for a
 * C-order array; with out == NULL only *len is set. *len is in/out: the room
 * in out, then the header length.
 */
RELAYOUT_API relayout_status relayout_npy_header(char *out, size_t *len,
                                                 const char *descr, int rank,
                                                 const int64_t *shape,
                                                 relayout_error *err);
/** The dtype a .npy descr holds ("<f2" -> f16); V2 and u2 need an override. */
RELAYOUT_API relayout_status relayout_npy_dtype(relayout_dtype *out,
                                                const char *descr,
                                                relayout_error *err);
/** The .npy descr for a dtype ("<f2"); bf16 is "<V2". 4-bit has none. */
RELAYOUT_API relayout_status relayout_npy_descr(const char **out,
                                                relayout_dtype dtype,
                                                relayout_error *err);

#ifdef __cplusplus
}
#endif
#endif /* RELAYOUT_NPY_H */
