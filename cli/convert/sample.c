/* sample.c - relayout sample: the built-in example array */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char sample_usage[] =
    "usage: relayout sample OUT.npy\n"
    "\n"
    "Writes the example of the Ascend format guide: a 20x28 f16 array\n"
    "holding 0, 1, ..., 559 in row-major order. Try:\n"
    "  relayout convert --from ND --to FRACTAL_NZ OUT.npy nz.npy\n";

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
