/* test_options.c - the relayout command's RELAYOUT_* variables mapped onto
 * an engine's options (cli/common/options.c): each variable, its default, and
 * values that are no plain number, which leave the default */
#include "../cli/common/cli.h"
#include "check.h"

/* The options with every variable unset but `name` (NULL: none) = value. */
static relayout_engine_options with(const char *name, const char *value) {
  static const char *const vars[] = {
      "RELAYOUT_DEVICE",       "RELAYOUT_CACHE_DIR", "RELAYOUT_CACHE_MB",
      "RELAYOUT_MAX_ALLOC",    "RELAYOUT_UNIFIED",   "RELAYOUT_FAMILIES",
      "RELAYOUT_STREAM_BYTES", "RELAYOUT_KERNELS",   "XDG_CACHE_HOME"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) unsetenv(vars[i]);
  setenv("HOME", "/home/u", 1);
  if (name) setenv(name, value, 1);
  relayout_engine_options o;
  cli_engine_options(&o, NULL);
  return o;
}

int main(void) {
  relayout_engine_options o = with(NULL, NULL);
  CHECK(o.size == sizeof o && !o.device && o.cache_bytes == 0 &&
            o.max_alloc == 0 && !o.copies &&
            o.families == RELAYOUT_FAMILIES_AUTO && o.stream_bytes == 0,
        "defaults");
  CHECK(o.cache_dir && !strcmp(o.cache_dir, "/home/u/.cache/relayout"),
        "the cache under HOME: %s", o.cache_dir ? o.cache_dir : "(none)");
  o = with("XDG_CACHE_HOME", "/xdg");
  CHECK(o.cache_dir && !strcmp(o.cache_dir, "/xdg/relayout"),
        "the cache under XDG_CACHE_HOME");
  o = with("RELAYOUT_CACHE_DIR", "/c");
  CHECK(o.cache_dir && !strcmp(o.cache_dir, "/c"), "RELAYOUT_CACHE_DIR");
  CHECK(!with("RELAYOUT_CACHE_DIR", "off").cache_dir, "off: no disk cache");
  CHECK(with("RELAYOUT_CACHE_MB", "2").cache_bytes == 2 << 20,
        "RELAYOUT_CACHE_MB in MiB");
  CHECK(with("RELAYOUT_CACHE_MB", "0.001 MiB").cache_bytes == 0 &&
            with("RELAYOUT_CACHE_MB", "-3").cache_bytes == 0,
        "a bound with a unit, or negative, is no bound: the default");
  CHECK(with("RELAYOUT_MAX_ALLOC", "8192").max_alloc == 8192,
        "RELAYOUT_MAX_ALLOC in bytes");
  CHECK(with("RELAYOUT_MAX_ALLOC", "8K").max_alloc == 0,
        "8K is no number of bytes: the device's own limit");
  CHECK(with("RELAYOUT_UNIFIED", "0").copies == 1 &&
            with("RELAYOUT_UNIFIED", "1").copies == 0,
        "RELAYOUT_UNIFIED=0 asks for copies");
  CHECK(
      with("RELAYOUT_FAMILIES", "gpu").families == RELAYOUT_FAMILIES_GPU &&
          with("RELAYOUT_FAMILIES", "cpu").families == RELAYOUT_FAMILIES_CPU &&
          with("RELAYOUT_FAMILIES", "fpga").families == RELAYOUT_FAMILIES_AUTO,
      "RELAYOUT_FAMILIES");
  CHECK(with("RELAYOUT_STREAM_BYTES", "1").stream_bytes == 1 &&
            with("RELAYOUT_STREAM_BYTES", "0").stream_bytes == -1,
        "RELAYOUT_STREAM_BYTES: 1 streams everything, 0 nothing");
  CHECK(with("RELAYOUT_STREAM_BYTES", "1 byte").stream_bytes == 0 &&
            with("RELAYOUT_STREAM_BYTES", "-1").stream_bytes == 0,
        "a bad RELAYOUT_STREAM_BYTES means the default");
  CHECK(with(NULL, NULL).kernels == RELAYOUT_KERNELS_AUTO &&
            with("RELAYOUT_KERNELS", "generic").kernels ==
                RELAYOUT_KERNELS_GENERIC &&
            with("RELAYOUT_KERNELS", "specialised").kernels ==
                RELAYOUT_KERNELS_SPECIALISED &&
            with("RELAYOUT_KERNELS", "fast").kernels == RELAYOUT_KERNELS_AUTO,
        "RELAYOUT_KERNELS");
  o = with("RELAYOUT_DEVICE", "ref");
  CHECK(o.device && !strcmp(o.device, "ref"),
        "RELAYOUT_DEVICE picks the device when none is named");
  cli_engine_options(&o, "cpu");
  CHECK(!strcmp(o.device, "cpu"), "a named device comes first");
  return check_summary();
}
