/* devices.c - relayout devices: the OpenCL devices and which one auto picks */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: relayout devices\n"
    "\n"
    "Lists every OpenCL device with its index (for --device N), platform,\n"
    "memory, compute units, OpenCL C version and largest allocation; '*'\n"
    "marks the one --device auto picks (the first GPU, else a CPU device,\n"
    "else the scalar reference). RELAYOUT_DEVICE sets the default.\n"
    "The last line says whether PoCL's CPU worker threads are pinned one\n"
    "to a CPU: every relayout command pins them (POCL_AFFINITY=1) unless\n"
    "POCL_AFFINITY is set or this process may not run on every CPU.\n";

int cmd_devices(int argc, char **argv) {
  cli_opt opts[] = {{0}};
  const char *pos[1];
  int npos, rc;
  if ((rc = cli_parse(argc, argv, opts, pos, 0, &npos, "devices", usage)))
    return rc < 0 ? 0 : rc;
  relayout_device_info info[64];
  int count, pick;
  relayout_error err;
  if (relayout_device_list(info, 64, &count, &pick, &err))
    return cli_error(EXIT_WORK, "devices", "%s", err.message);
  for (int i = 0; i < count && i < 64; i++) {
    const relayout_device_info *d = &info[i];
    printf("%c %d  %s [%s]\n", i == pick ? '*' : ' ', i, d->name, d->platform);
    printf("     %s, %u compute units, %.1f GiB memory, %.1f GiB largest "
           "allocation, %s\n",
           d->is_gpu ? "GPU" : "CPU", d->compute_units,
           (double)d->global_mem / (1 << 30), (double)d->max_alloc / (1 << 30),
           d->opencl_c);
  }
  printf("%c ref  the scalar reference%s\n", pick < 0 ? '*' : ' ',
         count ? "" : " (no OpenCL device found)");
  printf("PoCL's CPU worker threads: %s\n", cli_pin_state());
  return 0;
}

int cli_engine(relayout_engine **out, const char *device, const char *cmd) {
  relayout_engine_options o;
  cli_engine_options(&o, device);
  return cli_engine_from(out, &o, device, cmd);
}

void cli_engines_free(relayout_engine **e, int n) {
  for (int i = 0; e && i < n; i++) relayout_engine_free(e[i]);
  free(e);
}

int cli_device_items(char ***out, int *n, const char *spec, const char *cmd) {
  relayout_device_info info[64];
  int count = 0, pick;
  relayout_error err;
  if (!spec || strcmp(spec, "all"))
    return cli_parse_device_list(out, n, spec, cmd);
  *out = NULL;
  *n = 0;
  if (relayout_device_list(info, 64, &count, &pick, &err))
    return cli_error(EXIT_WORK, cmd, "--device all: %s", err.message);
  if (!count)
    return cli_error(EXIT_WORK, cmd, "--device all: no OpenCL device");
  if (count > 64) count = 64;
  char **items = calloc((size_t)count, sizeof *items);
  for (int i = 0; items && i < count; i++) {
    char index[16];
    snprintf(index, sizeof index, "%d", i);
    if (!(items[i] = strdup(index))) {
      cli_device_items_free(items, count);
      items = NULL;
    }
  }
  if (!items) return cli_error(EXIT_WORK, cmd, "out of memory");
  *out = items;
  *n = count;
  return 0;
}

int cli_engines(relayout_engine ***out, int *n,
                const relayout_engine_options *o, const char *device,
                const char *cmd) {
  const char *spec = device ? device : o->device;
  char **items;
  int count, rc;
  *out = NULL;
  *n = 0;
  if ((rc = cli_device_items(&items, &count, spec, cmd))) return rc;
  if (!(*out = calloc((size_t)count, sizeof **out))) {
    cli_device_items_free(items, count);
    return cli_error(EXIT_WORK, cmd, "out of memory");
  }
  if (count == 1 && strcmp(spec ? spec : "", "all")) /* one (or auto) */
    rc = cli_engine_from(&(*out)[(*n)++], o, device, cmd);
  for (int i = 0; i < count && !rc && *n < count; i++) {
    relayout_engine_options one = *o;
    one.device = items[i];
    rc = cli_engine_from(&(*out)[(*n)++], &one, items[i], cmd);
  }
  cli_device_items_free(items, count);
  if (rc) {
    cli_engines_free(*out, *n);
    *out = NULL;
    *n = 0;
  }
  return rc;
}

int cli_engine_from(relayout_engine **out, const relayout_engine_options *o,
                    const char *device, const char *cmd) {
  relayout_error err;
  const char *from = device ? "--device" : "RELAYOUT_DEVICE";
  relayout_status s = relayout_engine_create(out, o, &err);
  if (s) return cli_error(cli_exit_code(s), cmd, "%s: %s", from, err.message);
  if (*relayout_engine_note(*out))
    fprintf(stderr, "relayout %s: %s\n", cmd, relayout_engine_note(*out));
  return 0;
}
