/* safetensors.c - mapping and validating safetensors files, writing headers */
#include "safetensors.h"

#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct {
  const char *name;
  relayout_dtype bits;
} dtypes[] = {{"BOOL", RELAYOUT_BOOL},  {"U8", RELAYOUT_U8},
              {"I8", RELAYOUT_I8},      {"F8_E5M2", RELAYOUT_U8},
              {"F8_E4M3", RELAYOUT_U8}, {"F8_E8M0", RELAYOUT_U8},
              {"U16", RELAYOUT_U16},    {"I16", RELAYOUT_I16},
              {"F16", RELAYOUT_F16},    {"BF16", RELAYOUT_BF16},
              {"U32", RELAYOUT_U32},    {"I32", RELAYOUT_I32},
              {"F32", RELAYOUT_F32},    {"U64", RELAYOUT_U64},
              {"I64", RELAYOUT_I64},    {"F64", RELAYOUT_F64}};

int st_dtype_of(relayout_dtype *out, const char *name) {
  for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
    if (!strcmp(name, dtypes[i].name)) {
      *out = dtypes[i].bits;
      return 1;
    }
  return 0;
}

const char *st_dtype_name(relayout_dtype t) {
  for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
    if (dtypes[i].bits == t) return dtypes[i].name;
  return NULL;
}

/* A JSON integer in [0, 2^62], else -1. */
static int64_t whole(const json_t *v) {
  if (!json_is_integer(v)) return -1;
  json_int_t i = json_integer_value(v);
  return i < 0 || i > ((json_int_t)1 << 62) ? -1 : (int64_t)i;
}

static relayout_status read_tensor(st_tensor *t, const char *path,
                                   const char *name, json_t *v,
                                   uint64_t data_size, relayout_error *err) {
  t->name = name;
  if (!json_is_object(v))
    return cli_fail(err, RELAYOUT_ERR_FILE,
                    "%s: tensor '%s': entry is not an object", path, name);
  const char *key;
  json_t *field;
  json_object_foreach(v, key, field) {
    if (strcmp(key, "dtype") && strcmp(key, "shape") &&
        strcmp(key, "data_offsets"))
      return cli_fail(err, RELAYOUT_ERR_FILE,
                      "%s: tensor '%s': unknown field '%s'", path, name, key);
  }
  const json_t *dt = json_object_get(v, "dtype");
  const json_t *shape = json_object_get(v, "shape");
  const json_t *offs = json_object_get(v, "data_offsets");
  if (!json_is_string(dt) || !json_is_array(shape) || !json_is_array(offs))
    return cli_fail(err, RELAYOUT_ERR_FILE,
                    "%s: tensor '%s': needs dtype (a string), shape and "
                    "data_offsets (arrays)",
                    path, name);
  t->dtype = json_string_value(dt);
  if (!st_dtype_of(&t->bits, t->dtype))
    return cli_fail(err, RELAYOUT_ERR_FILE,
                    "%s: tensor '%s': unknown dtype '%s'", path, name,
                    t->dtype);
  if (json_array_size(shape) > RELAYOUT_MAX_DIMS)
    return cli_fail(err, RELAYOUT_ERR_FILE,
                    "%s: tensor '%s': rank %zu is above the limit of %d", path,
                    name, json_array_size(shape), RELAYOUT_MAX_DIMS);
  t->rank = (int)json_array_size(shape);
  int64_t bytes = relayout_dtype_bits(t->bits) / 8;
  for (int d = 0; d < t->rank; d++) {
    t->shape[d] = whole(json_array_get(shape, (size_t)d));
    if (t->shape[d] < 0)
      return cli_fail(err, RELAYOUT_ERR_FILE,
                      "%s: tensor '%s': shape[%d] is not a whole number", path,
                      name, d);
    if (__builtin_mul_overflow(bytes, t->shape[d], &bytes))
      return cli_fail(err, RELAYOUT_ERR_OVERFLOW,
                      "%s: tensor '%s': its size overflows 64 bits", path,
                      name);
  }
  int64_t b = json_array_size(offs) == 2 ? whole(json_array_get(offs, 0)) : -1;
  int64_t e = json_array_size(offs) == 2 ? whole(json_array_get(offs, 1)) : -1;
  if (b < 0 || e < b)
    return cli_fail(err, RELAYOUT_ERR_FILE,
                    "%s: tensor '%s': data_offsets must be [begin, end] with "
                    "0 <= begin <= end",
                    path, name);
  if ((uint64_t)e > data_size)
    return cli_fail(err, RELAYOUT_ERR_FILE,
                    "%s: tensor '%s': data_offsets [%lld, %lld] run past the "
                    "%llu-byte data section",
                    path, name, (long long)b, (long long)e,
                    (unsigned long long)data_size);
  if (e - b != bytes)
    return cli_fail(
        err, RELAYOUT_ERR_FILE,
        "%s: tensor '%s': %lld bytes in data_offsets, but its shape "
        "and dtype %s make %lld",
        path, name, (long long)(e - b), t->dtype, (long long)bytes);
  t->begin = (uint64_t)b;
  t->end = (uint64_t)e;
  return RELAYOUT_OK;
}

static int by_begin(const void *a, const void *b) {
  const st_tensor *x = a, *y = b;
  if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
  return (x->end > y->end) - (x->end < y->end);
}

/* Offsets sorted: each tensor starts where the one before ends, the first
 * at 0, the last at the end of the data. */
static relayout_status check_cover(const st_file *f, relayout_error *err) {
  uint64_t at = 0;
  for (int i = 0; i < f->ntensors; i++) {
    const st_tensor *t = &f->tensors[i];
    if (t->begin < at)
      return cli_fail(err, RELAYOUT_ERR_FILE,
                      "%s: tensor '%s' (bytes %llu..%llu) overlaps tensor '%s' "
                      "(bytes %llu..%llu)",
                      f->path, t->name, (unsigned long long)t->begin,
                      (unsigned long long)t->end, f->tensors[i - 1].name,
                      (unsigned long long)f->tensors[i - 1].begin,
                      (unsigned long long)f->tensors[i - 1].end);
    if (t->begin > at)
      return cli_fail(err, RELAYOUT_ERR_FILE,
                      "%s: data bytes %llu..%llu belong to no tensor", f->path,
                      (unsigned long long)at, (unsigned long long)t->begin);
    at = t->end;
  }
  if (at != f->data_size)
    return cli_fail(err, RELAYOUT_ERR_FILE,
                    "%s: data bytes %llu..%llu belong to no tensor", f->path,
                    (unsigned long long)at, (unsigned long long)f->data_size);
  return RELAYOUT_OK;
}

static relayout_status read_header(st_file *f, relayout_error *err) {
  if (f->size < 8)
    return cli_fail(err, RELAYOUT_ERR_FILE,
                    "%s: %zu bytes is too short for a safetensors file",
                    f->path, f->size);
  uint64_t n = 0;
  for (int i = 7; i >= 0; i--) n = n << 8 | f->map[i];
  if (n > ST_MAX_HEADER)
    return cli_fail(err, RELAYOUT_ERR_FILE,
                    "%s: header length %llu is above the safetensors limit of "
                    "%u bytes",
                    f->path, (unsigned long long)n, ST_MAX_HEADER);
  if (n > f->size - 8)
    return cli_fail(err, RELAYOUT_ERR_FILE,
                    "%s: header length %llu runs past the end of the %zu-byte "
                    "file (truncated?)",
                    f->path, (unsigned long long)n, f->size);
  json_error_t je;
  f->header = json_loadb((const char *)f->map + 8, (size_t)n,
                         JSON_REJECT_DUPLICATES, &je);
  if (!f->header)
    return cli_fail(err, RELAYOUT_ERR_FILE,
                    "%s: header is not valid JSON: %s (at byte %d)", f->path,
                    je.text, je.position);
  if (!json_is_object(f->header))
    return cli_fail(err, RELAYOUT_ERR_FILE, "%s: header is not a JSON object",
                    f->path);
  f->data = f->map + 8 + n;
  f->data_size = f->size - 8 - n;
  f->metadata = json_object_get(f->header, "__metadata__");
  if (f->metadata) {
    const char *key;
    json_t *v;
    if (!json_is_object(f->metadata))
      return cli_fail(err, RELAYOUT_ERR_FILE,
                      "%s: __metadata__ is not an object", f->path);
    json_object_foreach(f->metadata, key, v) {
      if (!json_is_string(v))
        return cli_fail(err, RELAYOUT_ERR_FILE,
                        "%s: __metadata__ entry '%s' is not a string", f->path,
                        key);
    }
  }
  size_t count = json_object_size(f->header) - (f->metadata != NULL);
  f->tensors = calloc(count ? count : 1, sizeof *f->tensors);
  if (!f->tensors)
    return cli_fail(err, RELAYOUT_ERR_NOMEM, "%s: out of memory", f->path);
  const char *name;
  json_t *v;
  json_object_foreach(f->header, name, v) {
    if (!strcmp(name, "__metadata__")) continue;
    relayout_status s = read_tensor(&f->tensors[f->ntensors], f->path, name, v,
                                    f->data_size, err);
    if (s) return s;
    f->ntensors++;
  }
  qsort(f->tensors, (size_t)f->ntensors, sizeof *f->tensors, by_begin);
  return check_cover(f, err);
}

relayout_status st_parse(st_file *f, const char *path, const void *bytes,
                         size_t size, relayout_error *err) {
  memset(f, 0, sizeof *f);
  f->path = path;
  f->map = bytes;
  f->size = size;
  relayout_status s = read_header(f, err);
  if (s) st_close(f);
  return s;
}

relayout_status st_open(st_file *f, const char *path, relayout_error *err) {
  memset(f, 0, sizeof *f);
  relayout_error why;
  int fd = cli_open_regular(path, &why);
  struct stat st;
  if (fd < 0)
    return cli_fail(err, RELAYOUT_ERR_IO, "%s: %s", path, why.message);
  if (fstat(fd, &st)) {
    close(fd);
    return cli_fail(err, RELAYOUT_ERR_IO, "%s: cannot look at it", path);
  }
  size_t size = (size_t)st.st_size;
  void *map = NULL;
  if (size) {
    map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
      close(fd);
      return cli_fail(err, RELAYOUT_ERR_IO, "%s: cannot map: %s", path,
                      strerror(errno));
    }
  }
  close(fd);
  relayout_status s = st_parse(f, path, map, size, err);
  if (s) {
    if (map) munmap(map, size);
    return s;
  }
  f->mapped = 1;
  return RELAYOUT_OK;
}

void st_close(st_file *f) {
  if (f->mapped) munmap((void *)f->map, f->size);
  json_decref(f->header);
  free(f->tensors);
  memset(f, 0, sizeof *f);
}

json_t *st_shape(int rank, const int64_t *shape) {
  json_t *dims = json_array();
  for (int i = 0; i < rank; i++)
    json_array_append_new(dims, json_integer((json_int_t)shape[i]));
  return dims;
}

json_t *st_entry(const char *dtype, int rank, const int64_t *shape,
                 uint64_t begin, uint64_t end) {
  json_t *dims = st_shape(rank, shape);
  return json_pack("{s:s, s:o, s:[I,I]}", "dtype", dtype, "shape", dims,
                   "data_offsets", (json_int_t)begin, (json_int_t)end);
}

relayout_status st_header_bytes(char **out, size_t *len, const json_t *header,
                                relayout_error *err) {
  char *text = json_dumps(header, JSON_COMPACT);
  if (!text) return cli_fail(err, RELAYOUT_ERR_NOMEM, "out of memory");
  size_t n = strlen(text);
  size_t padded = (n + 7) / 8 * 8;
  char *buf = malloc(8 + padded);
  if (!buf) {
    free(text);
    return cli_fail(err, RELAYOUT_ERR_NOMEM, "out of memory");
  }
  for (int i = 0; i < 8; i++) buf[i] = (char)((uint64_t)padded >> (8 * i));
  memcpy(buf + 8, text, n);
  memset(buf + 8 + n, ' ', padded - n);
  free(text);
  *out = buf;
  *len = 8 + padded;
  return RELAYOUT_OK;
}
