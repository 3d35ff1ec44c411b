/* safetensors.h - safetensors files: a validated view of one, mapped, and
 * the header of a new one
 *
 * A file is an 8-byte little-endian header length N, N bytes of JSON (an
 * object: "__metadata__" of strings, then one entry per tensor with dtype,
 * shape and data_offsets relative to the data section), then the data.
 */
#ifndef RELAYOUT_SAFETENSORS_H
#define RELAYOUT_SAFETENSORS_H

#include "relayout.h"

#include <jansson.h>
#include <stdint.h>

/* The largest header accepted, as the safetensors format itself limits it. */
#define ST_MAX_HEADER (100u << 20)

typedef struct st_tensor {
  const char *name;    /* points into the header */
  const char *dtype;   /* the safetensors name, e.g. "BF16" */
  relayout_dtype bits; /* a relayout dtype of the same width, for moving */
  int rank;
  int64_t shape[RELAYOUT_MAX_DIMS];
  uint64_t begin, end; /* byte offsets in the data section */
} st_tensor;

typedef struct st_file {
  const char *path;
  const unsigned char *map; /* the whole file, read-only */
  size_t size;
  int mapped;       /* map is st_open's mapping, unmapped by st_close */
  json_t *header;   /* owned */
  json_t *metadata; /* borrowed from header; NULL when absent */
  const unsigned char *data;
  uint64_t data_size;
  int ntensors;
  st_tensor *tensors; /* in data order */
} st_file;

/* Maps path and validates everything: header length bounded and in the
 * file, JSON well-formed with no duplicate keys, every field of the right
 * type, dtypes known, shape x dtype size equal to the byte length, offsets
 * in range, non-overlapping and covering the data section. The message
 * names the file and the tensor. */
relayout_status st_open(st_file *f, const char *path, relayout_error *err);
/* The same checks on a file's bytes in memory, which the caller keeps until
 * st_close; path names them in messages. */
relayout_status st_parse(st_file *f, const char *path, const void *bytes,
                         size_t size, relayout_error *err);
void st_close(st_file *f);

/* A shape as a JSON array. */
json_t *st_shape(int rank, const int64_t *shape);
/* The relayout dtype a safetensors dtype name is moved as (F8_* as u8): 1,
 * or 0 for a name it does not know. */
int st_dtype_of(relayout_dtype *out, const char *name);
/* The safetensors name of a dtype ("F16"; U8 for u8), NULL if none. */
const char *st_dtype_name(relayout_dtype t);
/* A header entry for one tensor. */
json_t *st_entry(const char *dtype, int rank, const int64_t *shape,
                 uint64_t begin, uint64_t end);

/* The bytes before the data: length prefix and JSON, padded with spaces so
 * the data starts 8-byte aligned. *out is freed by the caller. */
relayout_status st_header_bytes(char **out, size_t *len, const json_t *header,
                                relayout_error *err);

#endif /* RELAYOUT_SAFETENSORS_H */
