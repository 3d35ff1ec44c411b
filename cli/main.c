/* main.c - the relayout command: dispatches to its subcommands */
#include "cli.h"

#include <stdio.h>
#include <string.h>

static const char usage[] =
    "usage: relayout COMMAND [ARGS]\n"
    "\n"
    "Converts tensors between memory layouts (pad, split, transpose, "
    "blocking).\n"
    "\n"
    "commands:\n"
    "  convert  convert a .npy array from one layout to another\n"
    "  conform  run a matrix of conversions on a device against the reference\n"
    "  bench    time a conversion against the device's copy bandwidth\n"
    "  devices  list the OpenCL devices\n"
    "  explain  print a layout's axes, strides, padding and size\n"
    "  formats  list the named formats, their dims, parameters and grammar\n"
    "  preprocess  frames through an AIPP configuration into a model's input\n"
    "  repack   convert a safetensors checkpoint's weights, and back\n"
    "  sample   write the built-in 20x28 f16 example array\n"
    "  show     print a .npy array\n"
    "  verify   check another implementation's output against the reference\n"
    "\n"
    "'relayout COMMAND --help' or 'relayout help COMMAND' describes each;\n"
    "'relayout --version' prints the version.\n"
    "\n"
    "exit status:\n"
    "  0  success\n"
    "  1  the conversion, a file or a device failed\n"
    "  2  the command line was wrong\n"
    "Every error reads 'relayout COMMAND: error: ...'.\n"
    "\n"
    "environment:\n"
    "  RELAYOUT_DEVICE     auto (the first GPU, else a CPU device, else the\n"
    "                      reference), gpu, cpu, ref, an index or part of a\n"
    "                      name; --device wins\n"
    "  RELAYOUT_CACHE_DIR  compiled kernels (default ~/.cache/relayout; off)\n"
    "  RELAYOUT_CACHE_MB   the cache's bound (default 256)\n"
    "  RELAYOUT_KERNELS    auto (a new conversion starts on a generic kernel\n"
    "                      while its own compiles), specialised, generic\n"
    "  RELAYOUT_MAX_ALLOC, RELAYOUT_UNIFIED=0, RELAYOUT_FAMILIES=gpu|cpu,\n"
    "  RELAYOUT_STREAM_BYTES  for tests and tuning (docs/ARCHITECTURE.md)\n";

#ifndef RELAYOUT_HAVE_BENCH
/* A build without the bench (RELAYOUT_BUILD_BENCH=OFF) says so. */
static int no_bench(int argc, char **argv) {
  (void)argc, (void)argv;
  return cli_error(EXIT_USAGE, "bench",
                   "this relayout was built without its bench "
                   "(RELAYOUT_BUILD_BENCH=OFF)");
}
#define cmd_bench no_bench
#endif

int main(int argc, char **argv) {
  static const struct {
    const char *name;
    int (*run)(int, char **);
  } cmds[] = {{"bench", cmd_bench},           {"conform", cmd_conform},
              {"convert", cmd_convert},       {"devices", cmd_devices},
              {"explain", cmd_explain},       {"formats", cmd_formats},
              {"preprocess", cmd_preprocess}, {"repack", cmd_repack},
              {"sample", cmd_sample},         {"show", cmd_show},
              {"verify", cmd_verify}};
  if (argc < 2) {
    fputs(usage, stderr);
    return EXIT_USAGE;
  }
  if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
      (!strcmp(argv[1], "help") && argc == 2)) {
    fputs(usage, stdout);
    return 0;
  }
  static char flag[] = "--help";
  char *help[] = {argv[0], argv[argc > 2 ? 2 : 1], flag, NULL};
  if (!strcmp(argv[1], "help")) { /* help CMD: CMD --help */
    if (argc > 3) {
      fprintf(stderr, "relayout help: error: one COMMAND at a time\n");
      return EXIT_USAGE;
    }
    argc = 3;
    argv = help;
  }
  if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
    printf("relayout %s\n", relayout_version_string());
    return 0;
  }
  cli_install_cleanup();
  cli_pin_pocl();
  for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
    if (!strcmp(argv[1], cmds[i].name)) {
      cli_set_command(cmds[i].name);
      return cmds[i].run(argc - 1, argv + 1);
    }
  fprintf(stderr, "relayout: unknown command '%s'\n\n%s", argv[1], usage);
  return EXIT_USAGE;
}
