/* dtype.c - element types: names, widths, Ascend block sizes */
#include "internal.h"

#include <strings.h>

static const struct {
  const char *name;
  int bits;
} dtypes[RELAYOUT_DTYPE_COUNT] = {
    [RELAYOUT_BOOL] = {"bool", 8},  [RELAYOUT_U8] = {"u8", 8},
    [RELAYOUT_I8] = {"i8", 8},      [RELAYOUT_U16] = {"u16", 16},
    [RELAYOUT_I16] = {"i16", 16},   [RELAYOUT_F16] = {"f16", 16},
    [RELAYOUT_BF16] = {"bf16", 16}, [RELAYOUT_U32] = {"u32", 32},
    [RELAYOUT_I32] = {"i32", 32},   [RELAYOUT_F32] = {"f32", 32},
    [RELAYOUT_U64] = {"u64", 64},   [RELAYOUT_I64] = {"i64", 64},
    [RELAYOUT_F64] = {"f64", 64},   [RELAYOUT_I4] = {"i4", 4},
    [RELAYOUT_U4] = {"u4", 4},
};

static int valid(relayout_dtype t) {
  return (int)t >= 0 && t < RELAYOUT_DTYPE_COUNT;
}

int relayout_dtype_bits(relayout_dtype dtype) {
  return valid(dtype) ? dtypes[dtype].bits : 0;
}

const char *relayout_dtype_name(relayout_dtype dtype) {
  return valid(dtype) ? dtypes[dtype].name : NULL;
}

relayout_status relayout_dtype_from_name(relayout_dtype *out, const char *name,
                                         relayout_error *err) {
  if (!out || !name)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT, "dtype name is NULL");
  for (int i = 0; i < RELAYOUT_DTYPE_COUNT; i++)
    if (!strcasecmp(name, dtypes[i].name)) {
      *out = (relayout_dtype)i;
      return RELAYOUT_OK;
    }
  return rl_fail(err, RELAYOUT_ERR_UNKNOWN,
                 "unknown dtype '%s' (known: bool u8 i8 u16 i16 f16 bf16 u32 "
                 "i32 f32 u64 i64 f64 i4 u4)",
                 name);
}

size_t rl_unit(relayout_dtype dtype) {
  int bits = relayout_dtype_bits(dtype);
  return bits > 8 ? (size_t)bits / 8 : 1;
}

/* C0 as Ascend's graph engine defines it: 32 bytes of 1-byte types, 64
 * 4-bit elements, 16 elements otherwise (fp32 included). */
int64_t rl_cube_c0(relayout_dtype dtype) {
  switch (relayout_dtype_bits(dtype)) {
  case 4: return 64;
  case 8: return 32;
  default: return 16;
  }
}

/* 32 bytes over the element size: the matrix fractals' inner block. */
int64_t rl_b32(relayout_dtype dtype) {
  return 256 / relayout_dtype_bits(dtype);
}
