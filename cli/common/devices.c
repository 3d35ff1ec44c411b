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

int cli_engines(relayout_engine ***out, int *n,
                const relayout_engine_options *o, const char *device,
                const char *cmd) {
  char list[1024];
  relayout_device_info info[64];
  int count = 0, pick, rc = 0;
  relayout_error err;
  const char *spec = device ? device : o->device;
  if (spec && !strcmp(spec, "all")) { /* every OpenCL device, by index */
    if (relayout_device_list(info, 64, &count, &pick, &err))
      return cli_error(EXIT_WORK, cmd, "--device all: %s", err.message);
    if (!count)
      return cli_error(EXIT_WORK, cmd, "--device all: no OpenCL device");
    *list = 0;
    for (int i = 0; i < count && i < 64; i++)
      snprintf(list + strlen(list), sizeof list - strlen(list), "%s%d",
               i ? "," : "", i);
  } else if (snprintf(list, sizeof list, "%s", spec ? spec : "") >=
             (int)sizeof list) {
    return cli_error(EXIT_USAGE, cmd, "--device: too long");
  }
  size_t items = 1;
  for (const char *p = list; *p; p++) items += *p == ',';
  *n = 0;
  *out = calloc(items, sizeof **out);
  if (!*out) return cli_error(EXIT_WORK, cmd, "out of memory");
  if (!strchr(list, ',')) /* one device (or auto) */
    rc = cli_engine_from(&(*out)[(*n)++], o, device, cmd);
  for (char *item = strchr(list, ',') ? list : NULL, *next; item && !rc;
       item = next) {
    next = strchr(item, ',');
    if (next) *next++ = 0;
    relayout_engine_options one = *o;
    one.device = item;
    if (!*item)
      rc = cli_error(EXIT_USAGE, cmd, "--device %s: an empty item", spec);
    else
      rc = cli_engine_from(&(*out)[(*n)++], &one, item, cmd);
  }
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
