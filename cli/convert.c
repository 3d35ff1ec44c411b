/* convert.c - relayout convert: one .npy array from one layout to another */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: relayout convert --from SRC --to DST [--dims X=n,...] [--c0 N]\n"
    "                        [--dtype T] [--device D] IN.npy OUT.npy\n"
    "\n"
    "Converts IN, stored in SRC's physical shape, to OUT in DST's physical\n"
    "shape (one array axis per physical axis), same dtype.\n"
    "  --from, --to  a named format (ND, NC1HWC0, FRACTAL_NZ, FRACTAL_Z, "
    "...),\n"
    "                grammar text (NCHW16c, nChw8c, ...MN%32B) or a CuTe\n"
    "                layout ((4,2),(4,3)):((4,16),(1,32))\n"
    "  --dims        logical extents by letter, needed where SRC's padding\n"
    "                hides them (e.g. converting out of NC1HWC0: C=17)\n"
    "  --c0          overrides the dtype-dependent block of named formats\n"
    "  --dtype       reads the elements as this dtype (same width as IN's)\n"
    "  --device      auto (default: first GPU, else CPU, else the reference),\n"
    "                gpu, cpu, ref, an index or a name ('relayout devices');\n"
    "                RELAYOUT_DEVICE sets the default\n"
    "OUT is written whole or not at all; IN is never modified.\n";

/* A Fortran-order array: the same axes, strides running the other way. */
static void to_fortran(relayout_desc *d) {
  int64_t stride = 1;
  for (int i = 0; i < d->naxes; i++) {
    d->axes[i].stride = stride;
    stride *= d->axes[i].extent;
  }
}

static int run(const char *in, const char *out, relayout_layout *from,
               relayout_layout *to, relayout_engine *engine,
               const cli_opt *opts) {
  const char *cmd = "convert";
  relayout_error err;
  relayout_dim_value given[RELAYOUT_MAX_DIMS];
  int ngiven = 0;
  const char *dims = cli_get(opts, "dims");
  if (dims && cli_parse_dims(given, &ngiven, dims)) return EXIT_USAGE;
  if (cli_same_file(in, out))
    return cli_error(EXIT_USAGE, cmd, "%s: OUT is the input file", out);

  unsigned char *file = NULL, *dst = NULL;
  size_t size;
  int rc = EXIT_WORK;
  if (cli_read_file(&file, &size, in, &err))
    return cli_error(EXIT_WORK, cmd, "%s", err.message);
  relayout_npy_info info;
  relayout_dtype dtype;
  relayout_desc s, d;
  int64_t dst_bytes;
  if (relayout_npy_parse(&info, file, size, &err) ||
      relayout_npy_dtype(&dtype, info.descr, &err)) {
    cli_error(EXIT_WORK, cmd, "%s: %s", in, err.message);
    goto done;
  }
  const char *dtname = cli_get(opts, "dtype");
  if (dtname) {
    relayout_dtype want;
    if (relayout_dtype_from_name(&want, dtname, &err)) {
      rc = cli_error(EXIT_USAGE, cmd, "--dtype: %s", err.message);
      goto done;
    }
    if (relayout_dtype_bits(want) != relayout_dtype_bits(dtype)) {
      rc = cli_error(EXIT_USAGE, cmd,
                     "--dtype %s: %s holds %d-bit elements ('%s')", dtname, in,
                     relayout_dtype_bits(dtype), info.descr);
      goto done;
    }
    dtype = want;
  }
  if (relayout_bind(&s, &d, from, to, dtype, info.rank, info.shape, given,
                    ngiven, &err) ||
      relayout_desc_size_bytes(&dst_bytes, &d, &err)) {
    cli_error(EXIT_WORK, cmd, "%s -> %s: %s", relayout_layout_text(from),
              relayout_layout_text(to), err.message);
    goto done;
  }
  if (info.fortran_order && s.compact) to_fortran(&s);
  if ((uint64_t)dst_bytes > SIZE_MAX || !(dst = malloc((size_t)dst_bytes))) {
    cli_error(EXIT_WORK, cmd, "cannot allocate the %lld-byte output",
              (long long)dst_bytes);
    goto done;
  }
  int rank;
  int64_t shape[RELAYOUT_MAX_AXES];
  relayout_desc_physical_shape(&rank, shape, &d);
  relayout_plan *plan = NULL;
  relayout_error note;
  note.message[0] = 0;
  relayout_status st = relayout_plan_create(&plan, engine, &d, &s, &err);
  if (!st && *relayout_plan_note(plan))
    fprintf(stderr, "relayout convert: %s\n", relayout_plan_note(plan));
  if (!st)
    st =
        relayout_plan_run(plan, dst, (size_t)dst_bytes, file + info.data_offset,
                          (size_t)info.data_size, &note, &err);
  relayout_plan_free(plan);
  if (*note.message) fprintf(stderr, "%s\n", note.message);
  if (st || cli_write_npy(out, info.descr, rank, shape, dst, (size_t)dst_bytes,
                          &err)) {
    cli_error(EXIT_WORK, cmd, "%s", err.message);
    goto done;
  }
  rc = 0;
done:
  free(dst);
  free(file);
  return rc;
}

int cmd_convert(int argc, char **argv) {
  cli_opt opts[] = {{"from", NULL, 0}, {"to", NULL, 0},    {"dims", NULL, 0},
                    {"c0", NULL, 0},   {"dtype", NULL, 0}, {"device", NULL, 0},
                    {NULL, NULL, 0}};
  const char *pos[2];
  int npos, rc;
  if ((rc = cli_parse(argc, argv, opts, pos, 2, &npos, "convert", usage)))
    return rc < 0 ? 0 : rc;
  const char *from = cli_get(opts, "from"), *to = cli_get(opts, "to");
  if (!from || !to || npos != 2)
    return cli_error(EXIT_USAGE, "convert",
                     "needs --from, --to, IN.npy and OUT.npy\n%s", usage);
  relayout_layout *a = NULL, *b = NULL;
  relayout_engine *engine = NULL;
  if ((rc = cli_layouts(&a, &b, from, to, cli_get(opts, "c0"), "convert")))
    goto done;
  if ((rc = cli_engine(&engine, cli_get(opts, "device"), "convert"))) goto done;
  rc = run(pos[0], pos[1], a, b, engine, opts);
done:
  relayout_engine_free(engine);
  relayout_layout_free(a);
  relayout_layout_free(b);
  return rc;
}
