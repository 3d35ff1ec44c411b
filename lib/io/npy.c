/* npy.c - .npy headers: parse (versions 1-3) and write (version 1 or 2) */
#include "checked.h"
#include "internal.h"
#include "relayout_npy.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#define NPY_MAX_HEADER (1 << 20)

static const struct {
  const char *code; /* descr without the byte-order mark */
  relayout_dtype dtype;
} npy_types[] = {
    {"b1", RELAYOUT_BOOL}, {"u1", RELAYOUT_U8},  {"i1", RELAYOUT_I8},
    {"u2", RELAYOUT_U16},  {"i2", RELAYOUT_I16}, {"f2", RELAYOUT_F16},
    {"V2", RELAYOUT_BF16}, {"u4", RELAYOUT_U32}, {"i4", RELAYOUT_I32},
    {"f4", RELAYOUT_F32},  {"u8", RELAYOUT_U64}, {"i8", RELAYOUT_I64},
    {"f8", RELAYOUT_F64},
};

relayout_status relayout_npy_dtype(relayout_dtype *out, const char *descr,
                                   relayout_error *err) {
  if (!out || !descr)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT, "NULL argument");
  if (descr[0] == '>' && strcmp(descr + 1, "u1") && strcmp(descr + 1, "i1") &&
      strcmp(descr + 1, "b1"))
    return rl_fail(err, RELAYOUT_ERR_UNSUPPORTED,
                   "big-endian data ('%s') is not supported; save it "
                   "little-endian (numpy: a.astype(a.dtype.newbyteorder('<')))",
                   descr);
  if (descr[0] == '<' || descr[0] == '|' || descr[0] == '>')
    for (size_t i = 0; i < sizeof npy_types / sizeof npy_types[0]; i++)
      if (!strcmp(descr + 1, npy_types[i].code)) {
        *out = npy_types[i].dtype;
        return RELAYOUT_OK;
      }
  return rl_fail(err, RELAYOUT_ERR_UNSUPPORTED,
                 "dtype '%s' is not supported (bool, 8/16/32/64-bit ints, "
                 "f16/f32/f64, and bf16 saved as V2)",
                 descr);
}

relayout_status relayout_npy_descr(const char **out, relayout_dtype dtype,
                                   relayout_error *err) {
  static const char *const descrs[RELAYOUT_DTYPE_COUNT] = {
      [RELAYOUT_BOOL] = "|b1", [RELAYOUT_U8] = "|u1",  [RELAYOUT_I8] = "|i1",
      [RELAYOUT_U16] = "<u2",  [RELAYOUT_I16] = "<i2", [RELAYOUT_F16] = "<f2",
      [RELAYOUT_BF16] = "<V2", [RELAYOUT_U32] = "<u4", [RELAYOUT_I32] = "<i4",
      [RELAYOUT_F32] = "<f4",  [RELAYOUT_U64] = "<u8", [RELAYOUT_I64] = "<i8",
      [RELAYOUT_F64] = "<f8"};
  if (!out || !relayout_dtype_name(dtype))
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT, "bad argument");
  if (!descrs[dtype])
    return rl_fail(err, RELAYOUT_ERR_UNSUPPORTED,
                   ".npy has no packed 4-bit dtype (%s)",
                   relayout_dtype_name(dtype));
  *out = descrs[dtype];
  return RELAYOUT_OK;
}

/* ---- the header: a Python dict literal with descr, fortran_order, shape */

typedef struct reader {
  const char *p, *end;
  relayout_error *err;
} reader;

static void skip_ws(reader *r) {
  while (r->p < r->end && isspace((unsigned char)*r->p)) r->p++;
}

static int eat(reader *r, char c) {
  skip_ws(r);
  if (r->p < r->end && *r->p == c) {
    r->p++;
    return 1;
  }
  return 0;
}

static relayout_status bad(reader *r, const char *what) {
  return rl_fail(r->err, RELAYOUT_ERR_FILE, "corrupt .npy header: %s", what);
}

static relayout_status read_str(reader *r, char *out, size_t size) {
  skip_ws(r);
  if (r->p >= r->end || (*r->p != '\'' && *r->p != '"'))
    return bad(r, "expected a quoted string");
  char q = *r->p++;
  size_t n = 0;
  while (r->p < r->end && *r->p != q) {
    if (n + 1 >= size) return bad(r, "string too long");
    out[n++] = *r->p++;
  }
  if (r->p >= r->end) return bad(r, "unterminated string");
  r->p++;
  out[n] = 0;
  return RELAYOUT_OK;
}

static relayout_status read_shape(reader *r, relayout_npy_info *info) {
  if (!eat(r, '(')) return bad(r, "shape is not a tuple");
  info->rank = 0;
  while (!eat(r, ')')) {
    skip_ws(r);
    if (r->p >= r->end || !isdigit((unsigned char)*r->p))
      return bad(r, "shape holds something other than whole numbers");
    if (info->rank == RELAYOUT_MAX_AXES)
      return rl_fail(r->err, RELAYOUT_ERR_UNSUPPORTED,
                     ".npy array has more than %d axes", RELAYOUT_MAX_AXES);
    int64_t v = 0;
    while (r->p < r->end && isdigit((unsigned char)*r->p)) {
      if (v > ((int64_t)1 << 62) / 10)
        return rl_fail(r->err, RELAYOUT_ERR_OVERFLOW,
                       ".npy shape has an extent beyond 2^62");
      v = v * 10 + (*r->p++ - '0');
    }
    info->shape[info->rank++] = v;
    if (!eat(r, ',') && !(skip_ws(r), r->p < r->end && *r->p == ')'))
      return bad(r, "expected ',' or ')' in shape");
  }
  return RELAYOUT_OK;
}

static relayout_status parse_dict(reader *r, relayout_npy_info *info) {
  int seen = 0;
  relayout_status s;
  if (!eat(r, '{')) return bad(r, "does not start with '{'");
  while (!eat(r, '}')) {
    char key[32];
    if ((s = read_str(r, key, sizeof key))) return s;
    if (!eat(r, ':')) return bad(r, "expected ':' after a key");
    if (!strcmp(key, "descr")) {
      if ((s = read_str(r, info->descr, sizeof info->descr))) return s;
      seen |= 1;
    } else if (!strcmp(key, "fortran_order")) {
      skip_ws(r);
      size_t left = (size_t)(r->end - r->p);
      if (left >= 4 && !strncmp(r->p, "True", 4))
        info->fortran_order = 1, r->p += 4;
      else if (left >= 5 && !strncmp(r->p, "False", 5))
        info->fortran_order = 0, r->p += 5;
      else
        return bad(r, "fortran_order is neither True nor False");
      seen |= 2;
    } else if (!strcmp(key, "shape")) {
      if ((s = read_shape(r, info))) return s;
      seen |= 4;
    } else {
      return rl_fail(r->err, RELAYOUT_ERR_FILE,
                     "corrupt .npy header: unexpected key '%s'", key);
    }
    if (!eat(r, ',') && !(skip_ws(r), r->p < r->end && *r->p == '}'))
      return bad(r, "expected ',' or '}'");
  }
  if (seen != 7) return bad(r, "descr, fortran_order or shape is missing");
  return RELAYOUT_OK;
}

relayout_status relayout_npy_parse_header(relayout_npy_info *out,
                                          const void *head, size_t size,
                                          relayout_error *err) {
  if (!out || !head)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT, "NULL argument");
  const unsigned char *b = head;
  if (size < 10 || memcmp(b, "\x93NUMPY", 6))
    return rl_fail(err, RELAYOUT_ERR_FILE,
                   "not a .npy file (no \\x93NUMPY magic)");
  int major = b[6];
  if (major < 1 || major > 3)
    return rl_fail(err, RELAYOUT_ERR_FILE,
                   ".npy version %d.%d is not supported (1 to 3 are)", major,
                   b[7]);
  size_t prefix = major == 1 ? 10 : 12;
  if (size < prefix)
    return rl_fail(err, RELAYOUT_ERR_FILE,
                   ".npy file is truncated in its prefix");
  size_t hlen = major == 1 ? (size_t)(b[8] | b[9] << 8)
                           : (size_t)b[8] | (size_t)b[9] << 8 |
                                 (size_t)b[10] << 16 | (size_t)b[11] << 24;
  if (hlen > NPY_MAX_HEADER)
    return rl_fail(err, RELAYOUT_ERR_FILE,
                   ".npy header length %zu is beyond the %d-byte limit", hlen,
                   NPY_MAX_HEADER);
  relayout_npy_info info;
  memset(&info, 0, sizeof info);
  if (hlen > size - prefix) {
    out->data_offset = (int64_t)(prefix + hlen); /* what a stream reads */
    return rl_fail(err, RELAYOUT_ERR_BUFFER,
                   ".npy header of %zu bytes runs past the end of the file",
                   hlen);
  }
  reader r = {(const char *)b + prefix, (const char *)b + prefix + hlen, err};
  relayout_status s = parse_dict(&r, &info);
  if (s) return s;
  relayout_dtype dt;
  if ((s = relayout_npy_dtype(&dt, info.descr, err))) return s;
  info.elem_size = relayout_dtype_bits(dt) / 8;
  if (info.rank == 0)
    return rl_fail(
        err, RELAYOUT_ERR_DIMS,
        ".npy array is 0-dimensional; relayout needs at least one axis");
  int64_t bytes = info.elem_size;
  for (int i = 0; i < info.rank; i++) {
    if (info.shape[i] == 0)
      return rl_fail(err, RELAYOUT_ERR_DIMS,
                     ".npy array axis %d has extent 0; relayout needs "
                     "non-empty arrays",
                     i);
    if (!rl_mul(&bytes, bytes, info.shape[i]))
      return rl_fail(err, RELAYOUT_ERR_OVERFLOW,
                     ".npy shape multiplies out beyond 2^63 bytes");
  }
  info.data_offset = (int64_t)(prefix + hlen);
  info.data_size = bytes;
  *out = info;
  return RELAYOUT_OK;
}

relayout_status relayout_npy_parse(relayout_npy_info *out, const void *file,
                                   size_t size, relayout_error *err) {
  relayout_npy_info info;
  relayout_status s = relayout_npy_parse_header(&info, file, size, err);
  if (s) return s == RELAYOUT_ERR_BUFFER ? RELAYOUT_ERR_FILE : s;
  uint64_t have = size - (uint64_t)info.data_offset;
  if (have < (uint64_t)info.data_size)
    return rl_fail(err, RELAYOUT_ERR_FILE,
                   ".npy file is truncated: its shape needs %lld data bytes, "
                   "it holds %llu",
                   (long long)info.data_size, (unsigned long long)have);
  if (have > (uint64_t)info.data_size)
    return rl_fail(err, RELAYOUT_ERR_FILE,
                   ".npy file has %llu bytes after the %lld its shape needs",
                   (unsigned long long)(have - (uint64_t)info.data_size),
                   (long long)info.data_size);
  *out = info;
  return RELAYOUT_OK;
}

relayout_status relayout_npy_header(char *out, size_t *len, const char *descr,
                                    int rank, const int64_t *shape,
                                    relayout_error *err) {
  if (!len || !descr || (rank > 0 && !shape) || rank < 1 ||
      rank > RELAYOUT_MAX_AXES || strlen(descr) > 8)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT, "bad argument");
  char dict[640];
  size_t n = (size_t)snprintf(dict, sizeof dict,
                              "{'descr': '%s', 'fortran_order': False, "
                              "'shape': (",
                              descr);
  for (int i = 0; i < rank; i++)
    n += (size_t)snprintf(dict + n, sizeof dict - n, "%lld%s",
                          (long long)shape[i],
                          rank == 1 || i + 1 < rank ? ", " : "");
  n += (size_t)snprintf(dict + n, sizeof dict - n, "), }");
  /* Pad with spaces and a newline so the data starts on a 64-byte line. */
  size_t prefix = 10 + n + 1 > 65535 ? 12 : 10;
  size_t total = (prefix + n + 1 + 63) / 64 * 64;
  if (!out) {
    *len = total;
    return RELAYOUT_OK;
  }
  if (*len < total)
    return rl_fail(err, RELAYOUT_ERR_BUFFER,
                   ".npy header needs %zu bytes, room for %zu", total, *len);
  size_t hlen = total - prefix;
  memcpy(out, "\x93NUMPY", 6);
  out[6] = prefix == 10 ? 1 : 2;
  out[7] = 0;
  for (size_t i = 0; i < prefix - 8; i++) out[8 + i] = (char)(hlen >> (8 * i));
  memcpy(out + prefix, dict, n);
  memset(out + prefix + n, ' ', hlen - n - 1);
  out[total - 1] = '\n';
  *len = total;
  return RELAYOUT_OK;
}
