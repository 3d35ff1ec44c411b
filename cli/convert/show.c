/* show.c - relayout show: a .npy array's values, or a safetensors file's
 * tensors (one tensor's values by name), large arrays elided as numpy
 * elides them */
#include "cli.h"
#include "safetensors.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: relayout show [--full] FILE.npy\n"
    "       relayout show [--full] FILE.safetensors [NAME]\n"
    "\n"
    "Prints a .npy array's shape, dtype and values, one innermost row a line;\n"
    "past 1000 elements, the first and last 3 along each axis, with '...'\n"
    "between, as numpy prints (--full: every value). A safetensors file: its\n"
    "tensors (name, dtype,\n"
    "shape, bytes, and what a repack made of each), or with NAME that\n"
    "tensor's values. FILE may be - (standard input) for a .npy array.\n";

enum { SUMMARY_OVER = 1000, EDGE = 3 }; /* numpy's threshold and edgeitems */

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

/* The index after x along an axis of extent e: summarized, 2 -> e - 3. */
static int64_t step(int64_t x, int64_t e, int summarize) {
  return summarize && e > 2 * EDGE && x == EDGE - 1 ? e - EDGE : x + 1;
}

static int full; /* --full: no elision */

/* Row-major values of the given shape, one innermost row a line. */
static void print_values(const unsigned char *p, relayout_dtype t, int rank,
                         const int64_t *shape, int64_t count) {
  size_t size = (size_t)relayout_dtype_bits(t) / 8;
  int summarize = !full && count > SUMMARY_OVER;
  int64_t row = shape[rank - 1], idx[RELAYOUT_MAX_AXES] = {0};
  for (;;) {
    int open = 0; /* brackets opened before this row */
    while (open < rank - 1 && idx[rank - 2 - open] == 0) open++;
    printf("%*s%.*s[", rank - 1 - open, "", open, "[[[[[[[[[[[[[[[[[[[[[[[[");
    int64_t at = 0;
    for (int i = 0; i < rank - 1; i++) at = at * shape[i] + idx[i];
    for (int64_t j = 0, prev = -1; j < row;
         prev = j, j = step(j, row, summarize)) {
      if (j) fputs(j == prev + 1 ? " " : " ... ", stdout);
      print_value(p + (size_t)(at * row + j) * size, t);
    }
    int close = 0, i = rank - 2, jumped = 0;
    for (; i >= 0; i--, close++) {
      int64_t next = step(idx[i], shape[i], summarize);
      jumped = next != idx[i] + 1;
      if (next < shape[i]) {
        idx[i] = next;
        break;
      }
      idx[i] = 0;
    }
    printf("]%.*s\n", close, "]]]]]]]]]]]]]]]]]]]]]]]]");
    if (i < 0) return;
    if (jumped) printf("%*s...\n", i + 1, "");
  }
}

static void print_shape(int rank, const int64_t *shape) {
  printf("(");
  for (int i = 0; i < rank; i++)
    printf("%s%lld", i ? ", " : "", (long long)shape[i]);
  printf(rank == 1 ? ",)" : ")");
}

static int show_npy(const char *path) {
  unsigned char *file;
  size_t size;
  relayout_error err;
  relayout_npy_info info;
  relayout_dtype t;
  if (cli_read_npy(path, &file, &size, &err))
    return cli_error(EXIT_WORK, "show", "%s: %s", path, err.message);
  if (relayout_npy_parse(&info, file, size, &err) ||
      relayout_npy_dtype(&t, info.descr, &err)) {
    free(file);
    return cli_error(EXIT_WORK, "show", "%s: %s", path, err.message);
  }
  printf("shape ");
  print_shape(info.rank, info.shape);
  printf(" %s%s\n", relayout_dtype_name(t),
         info.fortran_order ? ", Fortran order" : "");
  print_values(file + info.data_offset, t, info.rank, info.shape,
               info.data_size / info.elem_size);
  free(file);
  return 0;
}

/* A safetensors dtype as relayout prints it: by name, else by width. */
static relayout_dtype printed_as(const st_tensor *t) {
  relayout_dtype d;
  return relayout_dtype_from_name(&d, t->dtype, NULL) ? t->bits : d;
}

/* What a repack recorded of a tensor: "  repacked from ND (4, 3, 2, 2)
 * into FRACTAL_Z(c0=16,b16=16)". */
static void print_record(const char *rec) {
  json_t *j = rec ? json_loads(rec, 0, NULL) : NULL, *shape;
  const char *from, *to;
  if (j && !json_unpack(j, "{s:s, s:s, s:o}", "from", &from, "to", &to, "shape",
                        &shape)) {
    printf("  repacked from %s (", from);
    for (size_t i = 0; i < json_array_size(shape); i++)
      printf("%s%lld", i ? ", " : "",
             (long long)json_integer_value(json_array_get(shape, i)));
    printf(json_array_size(shape) == 1 ? ",) into %s" : ") into %s", to);
  }
  json_decref(j);
}

static int show_safetensors(const char *path, const char *name) {
  st_file f;
  relayout_error err;
  if (st_open(&f, path, &err))
    return cli_error(EXIT_WORK, "show", "%s", err.message);
  int rc = 0;
  if (!name) {
    uint64_t bytes = 0;
    for (int i = 0; i < f.ntensors; i++)
      bytes += f.tensors[i].end - f.tensors[i].begin;
    printf("%s: %d tensors, %llu bytes\n", path, f.ntensors,
           (unsigned long long)bytes);
  }
  for (int i = 0; i < f.ntensors; i++) {
    const st_tensor *t = &f.tensors[i];
    if (name && strcmp(name, t->name)) continue;
    int64_t count = 1;
    for (int d = 0; d < t->rank; d++) count *= t->shape[d];
    char key[512];
    snprintf(key, sizeof key, "relayout:%s", t->name);
    const char *rec =
        f.metadata ? json_string_value(json_object_get(f.metadata, key)) : NULL;
    if (!name) {
      fputs("  ", stdout);
      cli_put_text(stdout, t->name);
      printf("  %s ", t->dtype);
      print_shape(t->rank, t->shape);
      printf("  %llu bytes", (unsigned long long)(t->end - t->begin));
      print_record(rec);
      putchar('\n');
      continue;
    }
    cli_put_text(stdout, t->name);
    printf(": %s ", t->dtype);
    print_shape(t->rank, t->shape);
    printf("\n");
    if (count && t->rank)
      print_values(f.data + t->begin, printed_as(t), t->rank, t->shape, count);
    st_close(&f);
    return 0;
  }
  if (name)
    rc = cli_error(EXIT_WORK, "show", "%s has no tensor '%s'", path, name);
  st_close(&f);
  return rc;
}

int cmd_show(int argc, char **argv) {
  cli_opt opts[] = {{.name = "full", .is_flag = 1}, {0}};
  const char *pos[2];
  int npos, rc;
  if ((rc = cli_parse(argc, argv, opts, pos, 2, &npos, "show", usage)))
    return rc < 0 ? 0 : rc;
  full = cli_get(opts, "full") != NULL;
  if (npos < 1) return cli_error(EXIT_USAGE, "show", "needs FILE\n%s", usage);
  /* .npy begins with its magic; anything else is read as safetensors */
  char magic[6] = "";
  FILE *f = strcmp(pos[0], "-") ? fopen(pos[0], "rb") : NULL;
  int npy = !f || fread(magic, 1, 6, f) != 6 || !memcmp(magic, "\x93NUMPY", 6);
  if (f) fclose(f);
  if (npy && npos == 2)
    return cli_error(EXIT_USAGE, "show", "%s is a .npy array: it has no NAME",
                     pos[0]);
  return npy ? show_npy(pos[0])
             : show_safetensors(pos[0], npos == 2 ? pos[1] : NULL);
}
