/* convert.c - relayout convert: one .npy array from one layout to another */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: relayout convert --from SRC --to DST [--dims X=n,...] [--c0 N]\n"
    "                        [--dtype T] [--device D] [--wait-compile]\n"
    "                        [--to-dtype T [--scale S] [--zero-point Z]]\n"
    "                        [--from-scale S] [--from-zero-point Z]\n"
    "                        IN.npy OUT.npy\n"
    "       relayout convert --from SRC --to DST --shape AxBxC --dtype T\n"
    "                        [--dims X=n,...] [--c0 N] [--device D]\n"
    "                        [--wait-compile] IN OUT\n"
    "\n"
    "Converts IN, stored in SRC's physical shape, to OUT in DST's physical\n"
    "shape (one array axis per physical axis), in IN's dtype or --to-dtype.\n"
    "With --shape, IN and OUT are raw little-endian bytes (no header) and\n"
    "--shape gives IN's array shape.\n"
    "  --from, --to  a named format (ND, NC1HWC0, FRACTAL_NZ, FRACTAL_Z, "
    "...),\n"
    "                grammar text (NCHW16c, nChw8c, ...MN%32B), a CuTe\n"
    "                layout ((4,2),(4,3)):((4,16),(1,32)) or a torch_npu\n"
    "                acl_format number (0 NCHW, 1 NHWC, 2 ND, 3 NC1HWC0,\n"
    "                4 FRACTAL_Z, 16 HWCN, 27 NDHWC, 29 FRACTAL_NZ, 30 NCDHW,\n"
    "                32 NDC1HWC0, 33 FRACTAL_Z_3D)\n"
    "  --dims        logical extents by letter, needed where SRC's padding\n"
    "                hides them (e.g. converting out of NC1HWC0: C=17)\n"
    "  --c0          overrides the dtype-dependent block of named formats\n"
    "  --shape       IN is raw, of this array shape (e.g. 2x17x5x3)\n"
    "  --dtype       raw IN: its dtype (bool u8 i8 u16 i16 f16 bf16 u32 i32\n"
    "                f32 u64 i64 f64 i4 u4); .npy IN: reads its elements as\n"
    "                this dtype (same width)\n"
    "  --to-dtype    casts every element (docs/CASTS.md): between f64 f32\n"
    "                f16 bf16, quantizing to i8 u8 i4 u4, dequantizing back,\n"
    "                or between those integers\n"
    "  --scale, --zero-point  the quantization of an integer --to-dtype:\n"
    "                q = saturate(round_half_even(x / scale) + zero_point);\n"
    "                padding is written as the zero point\n"
    "  --from-scale, --from-zero-point  an integer IN's: its values are\n"
    "                (q - zero_point) * scale\n"
    "  --device      auto (default: first GPU, else CPU, else the reference),\n"
    "                gpu, cpu, ref, an index or a name ('relayout devices');\n"
    "                RELAYOUT_DEVICE sets the default\n"
    "  --wait-compile  a conversion new to the device waits for its own\n"
    "                kernel (else it runs the generic kernel at once, its\n"
    "                own building meanwhile, into the cache)\n"
    "IN may be - (standard input). OUT may be - (standard output), a\n"
    "device, a FIFO or a socket: written in place, in order. A file OUT (a\n"
    "symlink: the file it names) is written whole or not at all. IN is never\n"
    "modified.\n";

/* What IN holds: the array's shape and dtype and where its bytes are. */
typedef struct input {
  unsigned char *file;
  size_t size;
  const unsigned char *data;
  size_t data_size;
  int rank, fortran, raw;
  int64_t shape[RELAYOUT_MAX_AXES];
  relayout_dtype dtype;
  char descr[16]; /* .npy only */
} input;

/* A raw file of --shape and --dtype: its size must match exactly. */
static int read_raw(input *x, const char *in, const char *shape,
                    const char *dtname) {
  relayout_error err;
  x->raw = 1;
  if (!dtname)
    return cli_error(EXIT_USAGE, "convert",
                     "--shape needs --dtype: a raw file has no header");
  if (cli_parse_shape(x->shape, &x->rank, shape)) return EXIT_USAGE;
  if (relayout_dtype_from_name(&x->dtype, dtname, &err))
    return cli_error(EXIT_USAGE, "convert", "--dtype: %s", err.message);
  int64_t bits = relayout_dtype_bits(x->dtype);
  for (int i = 0; i < x->rank; i++)
    if (__builtin_mul_overflow(bits, x->shape[i], &bits) ||
        bits > INT64_MAX - 7)
      return cli_error(EXIT_USAGE, "convert", "--shape %s: the size overflows",
                       shape);
  uint64_t need = (uint64_t)(bits + 7) / 8;
  cli_in f;
  if (cli_in_open(&f, in, &err))
    return cli_error(EXIT_WORK, "convert", "%s: %s", in, err.message);
  relayout_status s = !f.stream && f.size != need ? RELAYOUT_ERR_FILE
                      : need > SIZE_MAX / 2
                          ? cli_fail(&err, RELAYOUT_ERR_NOMEM, "too large")
                          : cli_in_read(&f, &x->file, (size_t)need, &err);
  cli_in_close(&f);
  if (s == RELAYOUT_ERR_FILE && !f.stream)
    return cli_error(EXIT_WORK, "convert",
                     "%s holds %llu bytes; --shape %s of %s needs %llu", in,
                     (unsigned long long)f.size, shape,
                     relayout_dtype_name(x->dtype), (unsigned long long)need);
  if (s) return cli_error(EXIT_WORK, "convert", "%s: %s", in, err.message);
  x->size = x->data_size = (size_t)need;
  x->data = x->file;
  return 0;
}

/* A .npy file; --dtype (if given) reinterprets its elements. */
static int read_npy(input *x, const char *in, const char *dtname) {
  relayout_error err;
  relayout_npy_info info;
  if (cli_read_npy(in, &x->file, &x->size, &err) ||
      relayout_npy_parse(&info, x->file, x->size, &err) ||
      relayout_npy_dtype(&x->dtype, info.descr, &err))
    return cli_error(EXIT_WORK, "convert", "%s: %s", in, err.message);
  x->data = x->file + info.data_offset;
  x->data_size = (size_t)info.data_size;
  x->rank = info.rank;
  x->fortran = info.fortran_order;
  memcpy(x->shape, info.shape, sizeof info.shape);
  memcpy(x->descr, info.descr, sizeof x->descr);
  if (!dtname) return 0;
  relayout_dtype want;
  if (relayout_dtype_from_name(&want, dtname, &err))
    return cli_error(EXIT_USAGE, "convert", "--dtype: %s", err.message);
  if (relayout_dtype_bits(want) != relayout_dtype_bits(x->dtype))
    return cli_error(EXIT_USAGE, "convert",
                     "--dtype %s: %s holds %d-bit elements ('%s')", dtname, in,
                     relayout_dtype_bits(x->dtype), info.descr);
  x->dtype = want;
  return 0;
}

static int run(const input *x, cli_out *out, relayout_layout *from,
               relayout_layout *to, relayout_engine *engine,
               const cli_opt *opts) {
  const char *cmd = "convert";
  relayout_error err;
  relayout_dim_value given[RELAYOUT_MAX_DIMS];
  int ngiven = 0;
  const char *dims = cli_get(opts, "dims");
  if (dims && cli_parse_dims(given, &ngiven, dims)) return EXIT_USAGE;
  relayout_desc s, d;
  int64_t dst_bytes;
  relayout_status bound = relayout_bind(&s, &d, from, to, x->dtype, x->rank,
                                        x->shape, given, ngiven, &err);
  if (bound || relayout_desc_size_bytes(&dst_bytes, &d, &err))
    return cli_error(bound ? EXIT_USAGE : EXIT_WORK, cmd, "%s -> %s: %s",
                     relayout_layout_text(from), relayout_layout_text(to),
                     err.message);
  if (x->fortran && relayout_desc_column_major(&s, &err))
    return cli_error(EXIT_USAGE, cmd, "a Fortran-order array in %s: %s",
                     relayout_layout_text(from), err.message);
  int rc = cli_cast(&d, &s, to, from, opts, cmd);
  const char *descr = x->descr;
  if (rc) return rc;
  int cast = relayout_desc_dtype(&d) != relayout_desc_dtype(&s);
  if (relayout_desc_size_bytes(&dst_bytes, &d, &err) ||
      (cast && !x->raw &&
       relayout_npy_descr(&descr, relayout_desc_dtype(&d), &err)))
    return cli_error(EXIT_WORK, cmd, "%s", err.message);
  unsigned char *dst = NULL;
  if ((uint64_t)dst_bytes > SIZE_MAX ||
      !(dst = cli_alloc_aligned((size_t)dst_bytes)))
    return cli_error(EXIT_WORK, cmd, "cannot allocate the %lld-byte output",
                     (long long)dst_bytes);
  int rank;
  int64_t shape[RELAYOUT_MAX_AXES];
  relayout_desc_physical_shape(&rank, shape, &d);
  relayout_plan *plan = NULL;
  relayout_status st = relayout_plan_create(&plan, engine, &d, &s, &err);
  if (st == RELAYOUT_ERR_ARGUMENT) { /* a cast without a meaning */
    free(dst);
    return cli_error(EXIT_USAGE, cmd, "%s", err.message);
  }
  if (!st && cli_get(opts, "wait-compile")) st = relayout_plan_wait(plan, &err);
  if (!st)
    st = relayout_plan_run(plan, dst, (size_t)dst_bytes, x->data, x->data_size,
                           &err);
  if (!st && *relayout_plan_note(plan))
    fprintf(stderr, "relayout convert: %s\n", relayout_plan_note(plan));
  relayout_plan_free(plan);
  if (!st)
    st = x->raw ? cli_out_whole(out, NULL, 0, dst, (size_t)dst_bytes, &err)
                : cli_write_npy(out, descr, rank, shape, dst, (size_t)dst_bytes,
                                &err);
  free(dst);
  return st ? cli_error(EXIT_WORK, cmd, "%s", err.message) : 0;
}

int cmd_convert(int argc, char **argv) {
  cli_opt opts[] = {{.name = "from"},
                    {.name = "to"},
                    {.name = "dims"},
                    {.name = "c0"},
                    {.name = "dtype"},
                    {.name = "device"},
                    {.name = "shape"},
                    {.name = "wait-compile", .is_flag = 1},
                    {.name = "to-dtype"},
                    {.name = "scale"},
                    {.name = "zero-point"},
                    {.name = "from-scale"},
                    {.name = "from-zero-point"},
                    {0}};
  const char *pos[2];
  int npos, rc;
  if ((rc = cli_parse(argc, argv, opts, pos, 2, &npos, "convert", usage)))
    return rc < 0 ? 0 : rc;
  const char *from = cli_get(opts, "from"), *to = cli_get(opts, "to");
  if (!from || !to || npos != 2)
    return cli_error(EXIT_USAGE, "convert",
                     "needs --from, --to, IN and OUT\n%s", usage);
  relayout_layout *a = NULL, *b = NULL;
  relayout_engine *engine = NULL;
  input x = {0};
  if ((rc = cli_layouts(&a, &b, from, to, cli_get(opts, "c0"), "convert")))
    goto done;
  if ((rc = cli_engine(&engine, cli_get(opts, "device"), "convert"))) goto done;
  if (cli_same_file(pos[0], pos[1])) {
    rc = cli_error(EXIT_USAGE, "convert", "%s: OUT is the input file", pos[1]);
    goto done;
  }
  cli_out out;
  relayout_error err;
  if (cli_out_check(&out, pos[1], 1, &err)) {
    rc = cli_error(EXIT_WORK, "convert", "%s", err.message);
    goto done;
  }
  const char *shape = cli_get(opts, "shape"), *dtype = cli_get(opts, "dtype");
  rc = shape ? read_raw(&x, pos[0], shape, dtype) : read_npy(&x, pos[0], dtype);
  if (!rc) rc = run(&x, &out, a, b, engine, opts);
done:
  free(x.file);
  relayout_engine_free(engine);
  relayout_layout_free(a);
  relayout_layout_free(b);
  return rc;
}
