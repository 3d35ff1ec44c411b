/* verify.c - relayout verify: an output made by anything else, checked
 * against the reference, element by element, data and padding apart */
#include "conform.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: relayout verify --from SRC --to DST [--dims X=n,...] [--c0 N]\n"
    "                       [--dtype T] [--to-dtype T [--scale S]\n"
    "                       [--zero-point Z]] [--report N] IN.npy CAND.npy\n"
    "       relayout verify --from SRC --to DST --shape AxBxC --dtype T\n"
    "                       [...] IN CANDIDATE\n"
    "\n"
    "Checks CANDIDATE, IN converted from SRC to DST by anything else (a\n"
    "vendor SDK, torch_npu's npu_format_cast, a kernel of your own),\n"
    "against relayout's scalar reference, byte for byte, padding included.\n"
    "Options as 'relayout convert' takes them; with --shape, IN and\n"
    "CANDIDATE are raw bytes. Exit 0 when every element equals the\n"
    "reference's; else exit 1 and the first differing elements (--report,\n"
    "default 10), each named by its logical coordinate, or as padding (no\n"
    "logical coordinate maps to it), with its element offset and the\n"
    "expected and actual bits.\n";

/* CANDIDATE's bytes: raw, of exactly the layout's size, or a .npy file of
 * the layout's dtype and (as CANN stores it) physical shape. */
static int read_candidate(unsigned char **file, const unsigned char **data,
                          const char *path, const cli_input *x,
                          const relayout_desc *d, const char *descr,
                          int64_t bytes) {
  relayout_error err;
  size_t size;
  if (x->raw) {
    cli_in f;
    if (cli_in_open(&f, path, &err))
      return cli_error(EXIT_WORK, "verify", "%s: %s", path, err.message);
    relayout_status s = !f.stream && f.size != (uint64_t)bytes
                            ? RELAYOUT_ERR_FILE
                            : cli_in_read(&f, file, (size_t)bytes, &err);
    uint64_t had = f.size;
    cli_in_close(&f);
    if (s == RELAYOUT_ERR_FILE)
      return cli_error(EXIT_WORK, "verify",
                       "%s holds %llu bytes; the destination's layout takes "
                       "%lld",
                       path, (unsigned long long)had, (long long)bytes);
    if (s) return cli_error(EXIT_WORK, "verify", "%s: %s", path, err.message);
    *data = *file;
    return 0;
  }
  if (cli_read_npy(path, file, &size, &err))
    return cli_error(EXIT_WORK, "verify", "%s: %s", path, err.message);
  relayout_npy_info info;
  if (relayout_npy_parse(&info, *file, size, &err))
    return cli_error(EXIT_WORK, "verify", "%s: %s", path, err.message);
  if (strcmp(info.descr, descr) || info.fortran_order ||
      !relayout_desc_holds_shape(d, info.rank, info.shape) ||
      info.data_size != bytes)
    return cli_error(EXIT_WORK, "verify",
                     "%s is not a C-order '%s' array in the destination's "
                     "physical shape ('%s', %llu bytes)",
                     path, descr, info.descr,
                     (unsigned long long)info.data_size);
  *data = *file + info.data_offset;
  return 0;
}

/* Compares and reports; the exit code. */
static int compare(const unsigned char *want, const unsigned char *got,
                   const relayout_desc *d, const char *path, int report) {
  cli_diff r;
  if (cli_diff_find(&r, want, got, d, report))
    return cli_error(EXIT_WORK, "verify", "out of memory");
  if (!r.count)
    printf("%s equals the reference: %lld elements (%lld of them padding)\n",
           path, (long long)r.span, (long long)r.padding);
  else
    printf("%s differs from the reference in %lld of %lld elements (%lld "
           "data, %lld padding); the first %d:\n",
           path, (long long)r.count, (long long)r.span,
           (long long)(r.count - r.in_padding), (long long)r.in_padding, r.k);
  cli_diff_print(stdout, &r, want, got, d);
  cli_diff_free(&r);
  return r.count ? EXIT_WORK : 0;
}

int cmd_verify(int argc, char **argv) {
  cli_opt opts[] = {{.name = "from"}, {.name = "to"},     {.name = "dims"},
                    {.name = "c0"},   {.name = "dtype"},  {.name = "shape"},
                    CLI_CAST_OPTIONS, {.name = "report"}, {0}};
  const char *pos[2];
  int npos, rc;
  if ((rc = cli_parse(argc, argv, opts, pos, 2, &npos, "verify", usage)))
    return rc < 0 ? 0 : rc;
  const char *from = cli_get(opts, "from"), *to = cli_get(opts, "to");
  if (!from || !to || npos != 2)
    return cli_error(EXIT_USAGE, "verify",
                     "needs --from, --to, IN and CANDIDATE\n%s", usage);
  int64_t report = 10;
  if (cli_get(opts, "report") &&
      cli_parse_int(&report, cli_get(opts, "report"), "--report"))
    return EXIT_USAGE;
  if (report > 1000)
    return cli_error(EXIT_USAGE, "verify", "--report takes 1 to 1000");
  relayout_layout *a = NULL, *b = NULL;
  cli_input x = {0};
  unsigned char *cand = NULL, *want = NULL;
  const unsigned char *got = NULL;
  relayout_desc s, d;
  const char *descr;
  int64_t bytes;
  relayout_error err;
  if ((rc = cli_layouts(&a, &b, from, to, cli_get(opts, "c0"), "verify")) ||
      (rc = cli_input_read(&x, pos[0], cli_get(opts, "shape"),
                           cli_get(opts, "dtype"), "verify")) ||
      (rc = cli_input_bind(&s, &d, &descr, &x, a, b, opts, "verify")))
    goto done;
  relayout_desc_size_bytes(&bytes, &d, NULL);
  if ((rc = read_candidate(&cand, &got, pos[1], &x, &d, descr, bytes)))
    goto done;
  if (!(want = malloc((size_t)bytes + 1))) {
    rc = cli_error(EXIT_WORK, "verify", "out of memory");
    goto done;
  }
  relayout_status st = relayout_convert_ref(&d, want, (size_t)bytes, &s, x.data,
                                            x.data_size, &err);
  if (st)
    rc = cli_error(st == RELAYOUT_ERR_ARGUMENT ? EXIT_USAGE : EXIT_WORK,
                   "verify", "%s", err.message);
  else
    rc = compare(want, got, &d, pos[1], (int)report);
done:
  free(want);
  free(cand);
  free(x.file);
  free(x.keep);
  relayout_layout_free(a);
  relayout_layout_free(b);
  return rc;
}
