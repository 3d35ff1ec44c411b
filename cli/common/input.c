/* input.c - IN of convert and verify: a .npy file or raw bytes read, and
 * the conversion bound from its shape with the command's options */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

/* A raw file of --shape and --dtype: its size must match exactly. */
static int read_raw(cli_input *x, const char *in, const char *shape,
                    const char *dtname, const char *cmd) {
  relayout_error err;
  x->raw = 1;
  if (!dtname)
    return cli_error(EXIT_USAGE, cmd,
                     "--shape needs --dtype: a raw file has no header");
  if (cli_parse_shape(x->shape, &x->rank, shape)) return EXIT_USAGE;
  if (relayout_dtype_from_name(&x->dtype, dtname, &err))
    return cli_error(EXIT_USAGE, cmd, "--dtype: %s", err.message);
  int64_t bits = relayout_dtype_bits(x->dtype);
  for (int i = 0; i < x->rank; i++)
    if (__builtin_mul_overflow(bits, x->shape[i], &bits) ||
        bits > INT64_MAX - 7)
      return cli_error(EXIT_USAGE, cmd, "--shape %s: the size overflows",
                       shape);
  uint64_t need = (uint64_t)(bits + 7) / 8;
  cli_in f;
  if (cli_in_open(&f, in, &err))
    return cli_error(EXIT_WORK, cmd, "%s: %s", in, err.message);
  relayout_status s = !f.stream && f.size != need ? RELAYOUT_ERR_FILE
                      : need > SIZE_MAX / 2
                          ? cli_fail(&err, RELAYOUT_ERR_NOMEM, "too large")
                          : cli_in_read(&f, &x->file, (size_t)need, &err);
  cli_in_close(&f);
  if (s == RELAYOUT_ERR_FILE && !f.stream)
    return cli_error(EXIT_WORK, cmd,
                     "%s holds %llu bytes; --shape %s of %s needs %llu", in,
                     (unsigned long long)f.size, shape,
                     relayout_dtype_name(x->dtype), (unsigned long long)need);
  if (s) return cli_error(EXIT_WORK, cmd, "%s: %s", in, err.message);
  x->size = x->data_size = (size_t)need;
  x->data = x->file;
  return 0;
}

/* A .npy file; --dtype (if given) reinterprets its elements. */
static int read_npy(cli_input *x, const char *in, const char *dtname,
                    const char *cmd) {
  relayout_error err;
  relayout_npy_info info;
  if (cli_read_npy(in, &x->file, &x->size, &err) ||
      relayout_npy_parse(&info, x->file, x->size, &err) ||
      relayout_npy_dtype(&x->dtype, info.descr, &err))
    return cli_error(EXIT_WORK, cmd, "%s: %s", in, err.message);
  x->data = x->file + info.data_offset;
  x->data_size = (size_t)info.data_size;
  x->rank = info.rank;
  x->fortran = info.fortran_order;
  memcpy(x->shape, info.shape, sizeof info.shape);
  memcpy(x->descr, info.descr, sizeof x->descr);
  if (!dtname) return 0;
  relayout_dtype want;
  if (relayout_dtype_from_name(&want, dtname, &err))
    return cli_error(EXIT_USAGE, cmd, "--dtype: %s", err.message);
  if (relayout_dtype_bits(want) != relayout_dtype_bits(x->dtype))
    return cli_error(EXIT_USAGE, cmd,
                     "--dtype %s: %s holds %d-bit elements ('%s')", dtname, in,
                     relayout_dtype_bits(x->dtype), info.descr);
  x->dtype = want;
  return 0;
}

int cli_input_read(cli_input *x, const char *in, const char *shape,
                   const char *dtype, const char *cmd) {
  return shape ? read_raw(x, in, shape, dtype, cmd)
               : read_npy(x, in, dtype, cmd);
}

int cli_input_bind(relayout_desc *s, relayout_desc *d, const char **descr,
                   cli_input *x, const relayout_layout *from,
                   const relayout_layout *to, const cli_opt *opts,
                   const char *cmd) {
  relayout_error err;
  relayout_dim_value given[RELAYOUT_MAX_DIMS];
  int ngiven = 0;
  const char *dims = cli_get(opts, "dims");
  if (dims && cli_parse_dims(given, &ngiven, dims)) return EXIT_USAGE;
  if (relayout_bind(s, d, from, to, x->dtype, x->rank, x->shape, given, ngiven,
                    &err))
    return cli_error(EXIT_USAGE, cmd, "%s -> %s: %s",
                     relayout_layout_text(from), relayout_layout_text(to),
                     err.message);
  /* the cast first: a retype binds the descriptor afresh */
  int rc = cli_cast(d, s, to, from, &x->keep, opts, cmd);
  if (rc) return rc;
  if (x->fortran && relayout_desc_column_major(s, &err))
    return cli_error(EXIT_USAGE, cmd, "a Fortran-order array in %s: %s",
                     relayout_layout_text(from), err.message);
  *descr = x->descr;
  int64_t bytes;
  if (relayout_desc_size_bytes(&bytes, d, &err) ||
      (relayout_desc_dtype(d) != relayout_desc_dtype(s) && !x->raw &&
       relayout_npy_descr(descr, relayout_desc_dtype(d), &err)))
    return cli_error(EXIT_WORK, cmd, "%s", err.message);
  return 0;
}
