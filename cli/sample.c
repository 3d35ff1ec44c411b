/* sample.c - relayout sample (the built-in example array) and relayout show */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char sample_usage[] =
    "usage: relayout sample OUT.npy\n"
    "\n"
    "Writes the example of the Ascend format guide: a 20x28 f16 array\n"
    "holding 0, 1, ..., 559 in row-major order. Try:\n"
    "  relayout convert --from ND --to FRACTAL_NZ OUT.npy nz.npy\n";

static const char show_usage[] = "usage: relayout show FILE.npy\n"
                                 "\n"
                                 "Prints a .npy array's shape, dtype and "
                                 "values, one innermost row a line.\n";

/* f16 bits of a whole number below 2048 (exact in f16). */
static uint16_t small_int_to_f16(unsigned v) {
  if (v == 0) return 0;
  int e = 0;
  while ((v >> (e + 1)) != 0) e++;
  return (uint16_t)((unsigned)(e + 15) << 10 | ((v << (10 - e)) & 0x3FFu));
}

int cmd_sample(int argc, char **argv) {
  cli_opt opts[] = {{0}};
  const char *pos[1];
  int npos, rc;
  if ((rc = cli_parse(argc, argv, opts, pos, 1, &npos, "sample", sample_usage)))
    return rc < 0 ? 0 : rc;
  if (npos != 1)
    return cli_error(EXIT_USAGE, "sample", "needs OUT.npy\n%s", sample_usage);
  uint16_t data[20 * 28];
  for (unsigned i = 0; i < 20 * 28; i++) data[i] = small_int_to_f16(i);
  const int64_t shape[2] = {20, 28};
  relayout_error err;
  cli_out o;
  if (cli_out_check(&o, pos[0], 1, &err) ||
      cli_write_npy(&o, "<f2", 2, shape, data, sizeof data, &err))
    return cli_error(EXIT_WORK, "sample", "%s", err.message);
  return 0;
}

static double half_to_double(uint16_t h) {
  int e = h >> 10 & 0x1F, m = h & 0x3FF;
  double v = e == 0    ? ldexp(m, -24)
             : e == 31 ? (m ? NAN : INFINITY)
                       : ldexp(m + 1024, e - 25);
  return h >> 15 ? -v : v;
}

static void print_value(const unsigned char *p, relayout_dtype t) {
  uint64_t u = 0;
  memcpy(&u, p, (size_t)relayout_dtype_bits(t) / 8); /* little-endian host */
  switch (t) {
  case RELAYOUT_F16: printf("%g", half_to_double((uint16_t)u)); break;
  case RELAYOUT_BF16: {
    uint32_t w = (uint32_t)u << 16;
    float f;
    memcpy(&f, &w, 4);
    printf("%g", (double)f);
    break;
  }
  case RELAYOUT_F32: {
    float f;
    memcpy(&f, p, 4);
    printf("%g", (double)f);
    break;
  }
  case RELAYOUT_F64: {
    double f;
    memcpy(&f, p, 8);
    printf("%g", f);
    break;
  }
  case RELAYOUT_I8: printf("%d", (int8_t)u); break;
  case RELAYOUT_I16: printf("%d", (int16_t)u); break;
  case RELAYOUT_I32: printf("%d", (int32_t)u); break;
  case RELAYOUT_I64: printf("%lld", (long long)(int64_t)u); break;
  default: printf("%llu", (unsigned long long)u); break;
  }
}

int cmd_show(int argc, char **argv) {
  cli_opt opts[] = {{0}};
  const char *pos[1];
  int npos, rc;
  if ((rc = cli_parse(argc, argv, opts, pos, 1, &npos, "show", show_usage)))
    return rc < 0 ? 0 : rc;
  if (npos != 1)
    return cli_error(EXIT_USAGE, "show", "needs FILE.npy\n%s", show_usage);
  unsigned char *file;
  size_t size;
  relayout_error err;
  relayout_npy_info info;
  relayout_dtype t;
  if (cli_read_npy(pos[0], &file, &size, &err))
    return cli_error(EXIT_WORK, "show", "%s: %s", pos[0], err.message);
  if (relayout_npy_parse(&info, file, size, &err) ||
      relayout_npy_dtype(&t, info.descr, &err)) {
    free(file);
    return cli_error(EXIT_WORK, "show", "%s: %s", pos[0], err.message);
  }
  printf("shape (");
  for (int i = 0; i < info.rank; i++)
    printf("%s%lld", i ? ", " : "", (long long)info.shape[i]);
  printf(info.rank == 1 ? ",) %s%s\n" : ") %s%s\n", relayout_dtype_name(t),
         info.fortran_order ? ", Fortran order" : "");
  const unsigned char *p = file + info.data_offset;
  int64_t count = info.data_size / info.elem_size,
          row = info.shape[info.rank - 1];
  int64_t idx[RELAYOUT_MAX_AXES] = {0};
  for (int64_t e = 0; e < count; e += row) {
    int open = 0; /* brackets opened before this row */
    while (open < info.rank - 1 && idx[info.rank - 2 - open] == 0) open++;
    printf("%*s%.*s[", info.rank - 1 - open, "", open,
           "[[[[[[[[[[[[[[[[[[[[[[[[");
    for (int64_t j = 0; j < row; j++) {
      if (j) putchar(' ');
      print_value(p + (e + j) * info.elem_size, t);
    }
    int close = 0;
    int i = info.rank - 2;
    for (; i >= 0 && ++idx[i] == info.shape[i]; i--) idx[i] = 0, close++;
    printf("]%.*s\n", close, "]]]]]]]]]]]]]]]]]]]]]]]]");
  }
  free(file);
  return 0;
}
