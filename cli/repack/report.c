/* report.c - repack's progress line on a terminal and its --json summary */
#include "cli.h"
#include "repack.h"

#include <stdio.h>
#include <unistd.h>

void rp_report_init(rp_report *r) {
  *r = (rp_report){0};
  r->start = cli_now();
  r->tty = isatty(2);
  r->tensors = json_array();
}

void rp_report_add_work(rp_report *r, uint64_t bytes, int tensors) {
  r->total_bytes += bytes;
  r->total_tensors += tensors;
}

static void print_line(rp_report *r, double t) {
  double done = (double)r->done_bytes, total = (double)r->total_bytes;
  double secs = t - r->start, rate = secs > 0 ? done / secs : 0;
  double left = rate > 0 ? (total - done) / rate : 0;
  fprintf(stderr,
          "\rrepack: %.2f/%.2f GB  %d/%d tensors  %.0f MB/s  ETA %.0f s   ",
          done / 1e9, total / 1e9, r->done_tensors, r->total_tensors,
          rate / 1e6, left);
  r->last_print = t;
}

void rp_report_progress(void *ctx, uint64_t read, uint64_t written,
                        int tensors) {
  rp_report *r = ctx;
  r->read_bytes += read;
  r->written_bytes += written;
  r->done_bytes += read + written;
  r->done_tensors += tensors;
  double t = cli_now();
  if (r->tty && t - r->last_print > 0.1) print_line(r, t);
}

void rp_report_finish(rp_report *r, int ok, const rp_options *o, const char *in,
                      const char *out, const char *device) {
  double secs = cli_now() - r->start;
  double gbps =
      secs > 0 ? (double)(r->read_bytes + r->written_bytes) / secs / 1e9 : 0;
  if (r->tty && !o->dry_run && !o->warm) {
    print_line(r, cli_now());
    fputc('\n', stderr);
  }
  if (!ok) return;
  if (!r->tty && !o->dry_run && out) {
    char taken[48] = "";
    if (r->taken_back)
      snprintf(taken, sizeof taken, ", %d scale tensors taken back",
               r->taken_back);
    fprintf(stderr,
            "relayout repack: %d tensors (%d converted, %d copied%s) into %s: "
            "%.2f GB read and written in %.2f s, %.2f GB/s\n",
            r->done_tensors, r->converted,
            r->done_tensors - r->converted - r->taken_back, taken, out,
            (double)(r->read_bytes + r->written_bytes) / 1e9, secs, gbps);
  }
  json_t *unused = json_array();
  for (int i = 0; i < o->nrules; i++)
    if (!o->rules[i].selected) {
      fprintf(stderr,
              "relayout repack: warning: rule '%s' selected no tensor\n",
              o->rules[i].text);
      json_array_append_new(unused, json_string(o->rules[i].text));
    }
  if (!o->json) {
    json_decref(unused);
    return;
  }
  json_t *summary = json_pack(
      "{s:s, s:s?, s:s, s:b, s:b, s:f, s:I, s:I, s:f, s:O, s:o}", "input", in,
      "output", out, "device", device, "restore", o->restore, "dry_run",
      o->dry_run, "seconds", secs, "bytes_read", (json_int_t)r->read_bytes,
      "bytes_written", (json_int_t)r->written_bytes, "gb_per_s", gbps,
      "tensors", r->tensors, "unused_rules", unused);
  json_dumpf(summary, stdout, JSON_INDENT(1));
  fputc('\n', stdout);
  json_decref(summary);
}

void rp_report_free(rp_report *r) {
  json_decref(r->tensors);
  r->tensors = NULL;
}
