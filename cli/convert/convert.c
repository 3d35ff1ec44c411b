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
    "                        [--axis X]\n"
    "                        IN.npy OUT.npy\n"
    "       relayout convert --from SRC --to DST --shape AxBxC --dtype T\n"
    "                        [--dims X=n,...] [--c0 N] [--device D]\n"
    "                        [--wait-compile] IN OUT\n"
    "\n"
    "Converts IN, stored in SRC's physical shape, to OUT in DST's physical\n"
    "shape (one array axis per physical axis), in IN's dtype or --to-dtype.\n"
    "With --shape, IN and OUT are raw little-endian bytes (no header) and\n"
    "--shape gives IN's array shape. .npy files of versions 1 to 3, in C or\n"
    "Fortran order; bf16 as 'V2' (as ml_dtypes saves it). FRACTAL_Z and\n"
    "FRACTAL_Z_3D are written in CANN's 4 axes (C1*H*W, N1, N0, C0) and read\n"
    "in those or one axis per physical axis. IN may be - (standard input);\n"
    "OUT is written whole or not at all (a temp file renamed into place),\n"
    "or in place to -, a FIFO or a device; IN is never modified.\n"
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
    "  --axis        per channel: a scale or zero point given as a .npy\n"
    "                file holds one value per position of this logical dim\n"
    "                (a letter, or an ND dim's index): f32 scales, integer\n"
    "                zero points; a quantized OUT's padding is then 0\n"
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

static int run(cli_input *x, cli_out *out, relayout_layout *from,
               relayout_layout *to, relayout_engine *engine,
               const cli_opt *opts) {
  const char *cmd = "convert";
  relayout_error err;
  relayout_desc s, d;
  const char *descr;
  int rc = cli_input_bind(&s, &d, &descr, x, from, to, opts, cmd);
  if (rc) return rc;
  int64_t dst_bytes;
  relayout_desc_size_bytes(&dst_bytes, &d, NULL);
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
  cli_opt opts[] = {{.name = "from"},  {.name = "to"},
                    {.name = "dims"},  {.name = "c0"},
                    {.name = "dtype"}, {.name = "device"},
                    {.name = "shape"}, {.name = "wait-compile", .is_flag = 1},
                    CLI_CAST_OPTIONS,  {0}};
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
  cli_input x = {0};
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
  rc = cli_input_read(&x, pos[0], shape, dtype, "convert");
  if (!rc) rc = run(&x, &out, a, b, engine, opts);
done:
  free(x.file);
  free(x.keep);
  relayout_engine_free(engine);
  relayout_layout_free(a);
  relayout_layout_free(b);
  return rc;
}
