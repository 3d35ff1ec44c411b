/* test_images.c - relayout preprocess on JPEG and PNG files
 *
 * The test writes JPEGs (4:2:0 and 4:4:4, with libjpeg) and PNGs (RGB,
 * gray, RGBA, with libpng) of smooth patterns, runs the command on them
 * (several files, a directory, an @LIST file), and checks its output
 * against frames the test decodes itself through other paths of the same
 * libraries: RGB against libjpeg's own RGB output; the YUV420SP frame read
 * without colour conversion (channels Y, U, V as they lie) against
 * libjpeg's YCbCr output with its chroma replicated, not interpolated;
 * gray against its grayscale output; PNGs against the pixels written.
 * Then the refusals, each naming the file: a size other than the
 * configuration's (never resized), 4:4:4 chroma for YUV420SP, a PNG for
 * YUV420SP, a damaged JPEG, a file of neither kind among images. Then
 * batches (--batch): decoding ahead, output in place, failures in order.
 * usage: test_images PATH/TO/relayout
 */
#include "check.h"
#include "relayout_npy.h"
#include "run_cli.h"

#include <jpeglib.h>
#include <png.h>
#include <sys/stat.h>

enum { W = 38, H = 22 };

/* A smooth pattern, different per image k: RGB, w x h. */
static void pattern(unsigned char *rgb, int w, int h, int k) {
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      for (int c = 0; c < 3; c++)
        rgb[(y * w + x) * 3 + c] =
            (unsigned char)(40 + 3 * x * (c + 1) + 5 * y + 60 * k + 30 * c);
}

static void write_jpeg(const char *path, int w, int h, int k, int subsample) {
  struct jpeg_compress_struct c;
  struct jpeg_error_mgr e;
  unsigned char *rgb = malloc((size_t)(w * h * 3));
  pattern(rgb, w, h, k);
  FILE *f = fopen(path, "wb");
  c.err = jpeg_std_error(&e);
  jpeg_create_compress(&c);
  jpeg_stdio_dest(&c, f);
  c.image_width = (JDIMENSION)w;
  c.image_height = (JDIMENSION)h;
  c.input_components = 3;
  c.in_color_space = JCS_RGB;
  jpeg_set_defaults(&c);
  jpeg_set_quality(&c, 90, TRUE);
  c.comp_info[0].h_samp_factor = c.comp_info[0].v_samp_factor = subsample;
  jpeg_start_compress(&c, TRUE);
  while (c.next_scanline < c.image_height) {
    JSAMPROW row = rgb + c.next_scanline * (size_t)w * 3;
    jpeg_write_scanlines(&c, &row, 1);
  }
  jpeg_finish_compress(&c);
  jpeg_destroy_compress(&c);
  fclose(f);
  free(rgb);
}

/* The test's own decode of a JPEG, w x h, into `space`'s components,
 * chroma replicated (no fancy upsampling) where asked. */
static void read_jpeg(unsigned char *out, const char *path, J_COLOR_SPACE space,
                      int replicate) {
  struct jpeg_decompress_struct c;
  struct jpeg_error_mgr e;
  FILE *f = fopen(path, "rb");
  c.err = jpeg_std_error(&e);
  jpeg_create_decompress(&c);
  jpeg_stdio_src(&c, f);
  jpeg_read_header(&c, TRUE);
  c.out_color_space = space;
  if (replicate) c.do_fancy_upsampling = FALSE;
  jpeg_start_decompress(&c);
  size_t stride = (size_t)c.output_width * (size_t)c.output_components;
  while (c.output_scanline < c.output_height) {
    JSAMPROW row = out + c.output_scanline * stride;
    jpeg_read_scanlines(&c, &row, 1);
  }
  jpeg_finish_decompress(&c);
  jpeg_destroy_decompress(&c);
  fclose(f);
}

static void write_png(const char *path, const unsigned char *px, int w, int h,
                      png_uint_32 format) {
  png_image im;
  memset(&im, 0, sizeof im);
  im.version = PNG_IMAGE_VERSION;
  im.width = (png_uint_32)w;
  im.height = (png_uint_32)h;
  im.format = format;
  CHECK(png_image_write_to_file(&im, path, 0, px, 0, NULL), "%s written", path);
}

static const char *config(const char *path, const char *format) {
  FILE *f = fopen(path, "w");
  fprintf(f,
          "aipp_op {\n input_format: %s\n src_image_size_w: %d\n"
          " src_image_size_h: %d\n}\n",
          format, W, H);
  fclose(f);
  return path;
}

/* OUT.npy of `frames` f32 NCHW frames of c channels: its data, or NULL. */
static float *output(const char *path, int frames, int c) {
  FILE *f = fopen(path, "rb");
  static unsigned char file[1 << 20];
  size_t n = f ? fread(file, 1, sizeof file, f) : 0;
  if (f) fclose(f);
  relayout_npy_info info;
  relayout_error err;
  if (!n || relayout_npy_parse(&info, file, n, &err) || info.rank != 4 ||
      info.shape[0] != frames || info.shape[1] != c || info.shape[2] != H ||
      info.shape[3] != W || strcmp(info.descr, "<f4")) {
    CHECK(0, "%s: %d frames of %d channels, f32 NCHW", path, frames, c);
    return NULL;
  }
  return (float *)(void *)(file + info.data_offset);
}

/* Channel ch of pixel (x, y) of frame k in out, against want (bytes of
 * stride `per` per pixel): the number that differ. */
static int differ(const float *out, int k, int c, const unsigned char *want,
                  int per, int ch_from) {
  int bad = 0;
  for (int ch = 0; ch < c; ch++)
    for (int i = 0; i < W * H; i++)
      bad += out[((k * c + ch) * H * W) + i] !=
             (float)want[i * per + ch_from + ch];
  return bad;
}

/* The command on two JPEGs with configuration cfg, into f32 NCHW: each
 * frame equals the test's own decode of its file (libjpeg into `space`,
 * the chroma replicated where asked). */
static void against_libjpeg(const char *what, const char *cfg,
                            const char *const *files, int c,
                            J_COLOR_SPACE space, int replicate) {
  unsigned char want[W * H * 3];
  CHECK(cli("preprocess --aipp %s --to NCHW --dtype f32 %s %s o.npy", cfg,
            files[0], files[1]) == 0,
        "%s", what);
  const float *o = output("o.npy", 2, c);
  for (int k = 0; o && k < 2; k++) {
    read_jpeg(want, files[k], space, replicate);
    CHECK(!differ(o, k, c, want, c, 0), "%s: %s as libjpeg decodes it", what,
          files[k]);
  }
}

static void jpegs(void) {
  write_jpeg("a.jpg", W, H, 0, 2);
  write_jpeg("b.jpg", W, H, 1, 2);
  write_jpeg("full.jpg", W, H, 2, 1);
  write_jpeg("big.jpg", W + 2, H, 0, 2);
  static const char *const ab[] = {"a.jpg", "b.jpg"};
  static const char *const af[] = {"a.jpg", "full.jpg"};
  against_libjpeg("two JPEGs as RGB888_U8", config("rgb.cfg", "RGB888_U8"), ab,
                  3, JCS_RGB, 0);
  against_libjpeg("JPEGs as YUV400_U8", config("gray.cfg", "YUV400_U8"), af, 1,
                  JCS_GRAYSCALE, 0);
  /* no colour conversion: the channels are Y, U and V as they lie, which
   * libjpeg's YCbCr with the chroma replicated must match */
  against_libjpeg("4:2:0 JPEGs as YUV420SP_U8",
                  config("nv12.cfg", "YUV420SP_U8"), ab, 3, JCS_YCbCr, 1);
  CHECK(cli("preprocess --aipp nv12.cfg --to NCHW a.jpg full.jpg o2.npy") ==
                1 &&
            said("full.jpg: its colour is not YCbCr 4:2:0"),
        "4:4:4 chroma is refused for YUV420SP_U8");
  CHECK(cli("preprocess --aipp rgb.cfg --to NCHW a.jpg big.jpg o2.npy") == 1 &&
            said("big.jpg: it is 40x22; the configuration takes 38x22 "
                 "frames (relayout never resizes)"),
        "a JPEG of another size is refused");
  FILE *f = fopen("a.jpg", "rb"), *g = fopen("cut.jpg", "wb");
  unsigned char buf[4096];
  size_t n = fread(buf, 1, sizeof buf, f);
  fwrite(buf, 1, n / 2, g);
  fclose(f);
  fclose(g);
  CHECK(cli("preprocess --aipp rgb.cfg --to NCHW a.jpg cut.jpg o2.npy") == 1 &&
            said("cut.jpg: "),
        "a damaged JPEG is refused, naming it");
  CHECK(cli("preprocess --aipp rgb.cfg --to NCHW a.jpg rgb.cfg o2.npy") == 1 &&
            said("rgb.cfg: not a JPEG or PNG image"),
        "a file of neither kind among images is refused");
  struct stat st;
  CHECK(stat("o2.npy", &st) != 0, "no output after a refusal");
}

static void pngs(void) {
  unsigned char rgb[W * H * 3], rgba[W * H * 4], gray[W * H];
  pattern(rgb, W, H, 3);
  for (int i = 0; i < W * H; i++) {
    gray[i] = (unsigned char)(rgb[3 * i] ^ rgb[3 * i + 2]);
    for (int c = 0; c < 3; c++) rgba[4 * i + c] = rgb[3 * i + c];
    rgba[4 * i + 3] = (unsigned char)(i * 7);
  }
  mkdir("dir", 0777);
  write_png("dir/2-gray.png", gray, W, H, PNG_FORMAT_GRAY);
  write_png("dir/1-rgb.png", rgb, W, H, PNG_FORMAT_RGB);
  write_png("dir/3-rgba.PNG", rgba, W, H, PNG_FORMAT_RGBA);
  CHECK(cli("preprocess --aipp rgb.cfg --to NCHW --dtype f32 dir o.npy") == 0,
        "a directory of PNGs as RGB888_U8");
  const float *o = output("o.npy", 3, 3);
  if (o) {
    unsigned char g3[W * H * 3];
    for (int i = 0; i < W * H * 3; i++) g3[i] = gray[i / 3];
    CHECK(!differ(o, 0, 3, rgb, 3, 0) && !differ(o, 1, 3, g3, 3, 0) &&
              !differ(o, 2, 3, rgba, 4, 0),
          "PNGs in name order: the pixels written (gray as R = G = B, alpha "
          "dropped)");
  }
  FILE *f = fopen("list.txt", "w");
  fprintf(f, "dir/3-rgba.PNG\n\ndir/1-rgb.png\n");
  fclose(f);
  CHECK(cli("preprocess --aipp %s --to NCHW --dtype f32 @list.txt o.npy",
            config("xrgb.cfg", "XRGB8888_U8")) == 0,
        "a list of PNGs as XRGB8888_U8");
  o = output("o.npy", 2, 3);
  CHECK(o && !differ(o, 0, 3, rgba, 4, 0) && !differ(o, 1, 3, rgb, 3, 0),
        "the list's PNGs in its order, their RGB after the unused byte");
  CHECK(cli("preprocess --aipp nv12.cfg --to NCHW dir/1-rgb.png o3.npy") == 1 &&
            said("1-rgb.png: a PNG holds RGB or gray, not YUV420SP_U8"),
        "a PNG is refused for YUV420SP_U8");
  CHECK(cli("preprocess --aipp rgb.cfg --to NCHW @none.txt o3.npy") == 1 &&
            said("@none.txt: cannot open the list"),
        "a missing list is refused");
  fclose(fopen("empty.txt", "w"));
  CHECK(cli("preprocess --aipp rgb.cfg --to NCHW @empty.txt o3.npy") == 1 &&
            said("@empty.txt: the list names no file"),
        "an empty list is refused");
}

/* Whether files a and b hold the same bytes, and some. */
static int same_files(const char *a, const char *b) {
  FILE *f = fopen(a, "rb"), *g = fopen(b, "rb");
  int same = f && g, any = 0;
  for (int x = 0, y = 0; same && x != EOF; any = 1) {
    x = getc(f);
    y = getc(g);
    same = x == y;
  }
  if (f) fclose(f);
  if (g) fclose(g);
  return same && any;
}

/* Seven JPEGs in batches of 3, 3 and 1, decoding while the device works:
 * every frame as libjpeg decodes it; a blocked layout the same bytes in
 * batches as in one, and one with N inside (CHWN4) in one batch whatever
 * --batch says; the first failure in the inputs' order reported though a
 * later batch fails too; raw frames in batches, from and into streams. */
static void batches(void) {
  char path[32], list[256] = "";
  unsigned char want[W * H * 3];
  mkdir("many", 0777);
  for (int k = 0; k < 7; k++) {
    snprintf(path, sizeof path, "many/%d.jpg", k);
    write_jpeg(path, W, H, k, 2);
  }
  CHECK(cli("preprocess --aipp rgb.cfg --to NCHW --dtype f32 --batch 3 many "
            "o.npy") == 0,
        "seven JPEGs in batches of three");
  const float *o = output("o.npy", 7, 3);
  for (int k = 0; o && k < 7; k++) {
    snprintf(path, sizeof path, "many/%d.jpg", k);
    read_jpeg(want, path, JCS_RGB, 0);
    CHECK(!differ(o, k, 3, want, 3, 0), "batches: %s where it belongs", path);
  }
  static const char *const layouts[] = {"NC1HWC0", "CHWN4"};
  for (int i = 0; i < 2; i++) {
    CHECK(cli("preprocess --aipp rgb.cfg --to %s many one.npy", layouts[i]) ==
                  0 &&
              cli("preprocess --aipp rgb.cfg --to %s --batch 2 many two.npy",
                  layouts[i]) == 0 &&
              same_files("one.npy", "two.npy"),
          "%s: the same output in batches of two as in one", layouts[i]);
  }
  static const char *const order[] = {"a.jpg",   "a.jpg", "a.jpg",
                                      "cut.jpg", "a.jpg", "big.jpg"};
  for (int i = 0; i < 6; i++)
    snprintf(list + strlen(list), sizeof list - strlen(list), "%s ", order[i]);
  CHECK(cli("preprocess --aipp rgb.cfg --to NCHW --batch 2 %s o4.npy", list) ==
                1 &&
            said("cut.jpg: "),
        "a damaged JPEG in the second batch is reported, not a later one");
  struct stat st;
  CHECK(stat("o4.npy", &st) != 0, "no output after a failing batch");
  CHECK(cli("preprocess --aipp rgb.cfg --to NCHW --batch 0 many o4.npy") == 2 &&
            said("--batch: 0 must be at least 1"),
        "--batch 0 is refused");
  CHECK(cli("preprocess --aipp rgb.cfg --to CHWN4 --batch 2x many o4.npy") ==
                2 &&
            said("--batch: '2x' is not a whole number"),
        "--batch is checked where the layout runs in one batch too");
  FILE *f = fopen("frames.raw", "wb");
  for (int i = 0; i < 5 * W * H * 3; i++) putc((i * 7919) >> 3 & 255, f);
  fclose(f);
  f = fopen("cut.raw", "wb"); /* a frame and 7 bytes short of the last */
  for (int i = 0; i < 4 * W * H * 3 + 7; i++) putc(i & 255, f);
  fclose(f);
  CHECK(cli("preprocess --aipp rgb.cfg --to NC1HWC0 frames.raw one.npy") == 0 &&
            cli("preprocess --aipp rgb.cfg --to NC1HWC0 --batch 2 frames.raw "
                "-") == 0 &&
            same_files("one.npy", "out.txt"),
        "raw frames in batches of two, into a stream: the same output");
  CHECK(
      cli_piped("frames.raw",
                "preprocess --aipp rgb.cfg --to NC1HWC0 --batch 2 - two.npy") ==
              0 &&
          same_files("one.npy", "two.npy"),
      "frames from a stream, counted at its end: the same .npy");
  CHECK(cli("preprocess --aipp rgb.cfg --to NC1HWC0 --raw frames.raw "
            "one.raw") == 0 &&
            cli_piped("frames.raw", "preprocess --aipp rgb.cfg --to NC1HWC0 "
                                    "--raw --batch 3 - -") == 0 &&
            same_files("one.raw", "out.txt"),
        "frames from a stream into a stream, --raw");
  CHECK(cli_piped("cut.raw",
                  "preprocess --aipp rgb.cfg --to NC1HWC0 - o5.npy") == 1 &&
            said("-: ends 7 bytes into a frame of 2508 bytes"),
        "a stream that ends inside a frame is refused");
  CHECK(cli_piped("/dev/null",
                  "preprocess --aipp rgb.cfg --to NC1HWC0 - o5.npy") == 1 &&
            said("no frames came"),
        "an empty stream is refused");
  CHECK(stat("o5.npy", &st) != 0, "no output after a refused stream");
  CHECK(cli_piped("frames.raw",
                  "preprocess --aipp rgb.cfg --to CHWN4 - o5.npy") == 2 &&
            said("need a layout that keeps each frame's output whole"),
        "frames from a stream into a layout with N inside are refused");
  CHECK(cli_piped("frames.raw", "preprocess --aipp rgb.cfg --to NCHW - -") ==
                2 &&
            said("give --raw, or a file"),
        "frames from a stream into a stream need --raw");
}

/* Whether file holds `size` bytes equal to want. */
static int holds(const char *file, const unsigned char *want, size_t size) {
  unsigned char got[8192];
  FILE *f = fopen(file, "rb");
  size_t n = f ? fread(got, 1, sizeof got, f) : 0;
  if (f) fclose(f);
  return n == size && !memcmp(got, want, size);
}

/* A JPEG cut short inside its scan decodes with libjpeg's warnings only:
 * refused all the same. OUT that is one of the inputs (a raw file, an
 * image, the configuration, a list, an image a directory holds) is refused
 * and left as it was; a FIFO among the images is refused, not waited on. */
static void inputs_kept(void) {
  unsigned char jpg[4096], raw[2 * W * H * 3];
  FILE *f = fopen("a.jpg", "rb");
  size_t n = fread(jpg, 1, sizeof jpg, f), sos = 2;
  fclose(f);
  while (sos + 1 < n && !(jpg[sos] == 0xFF && jpg[sos + 1] == 0xDA)) sos++;
  f = fopen("tr.jpg", "wb");
  fwrite(jpg, 1, sos + 20 < n ? sos + 20 : n, f);
  fclose(f);
  static const char *const cfgs[] = {"rgb.cfg", "nv12.cfg"};
  for (int i = 0; i < 4; i++)
    CHECK(cli("preprocess --aipp %s --to NCHW --device %s a.jpg tr.jpg o6.npy",
              cfgs[i % 2], i < 2 ? "ref" : "cpu") == 1 &&
              said("tr.jpg: "),
          "a JPEG cut 20 bytes into its scan is refused (%s, %s)", cfgs[i % 2],
          i < 2 ? "ref" : "cpu");
  for (size_t i = 0; i < sizeof raw; i++) raw[i] = (unsigned char)(i * 13);
  f = fopen("same.raw", "wb");
  fwrite(raw, 1, sizeof raw, f);
  fclose(f);
  f = fopen("list2.txt", "w");
  fputs("a.jpg\nb.jpg\n", f);
  fclose(f);
  static const char *const runs[][2] = {
      {"same.raw", "same.raw"}, {"a.jpg b.jpg", "b.jpg"},
      {"a.jpg", "rgb.cfg"},     {"@list2.txt", "list2.txt"},
      {"@list2.txt", "a.jpg"},  {"dir", "dir/1-rgb.png"}};
  for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
    f = fopen(runs[i][1], "rb");
    unsigned char before[8192];
    size_t had = fread(before, 1, sizeof before, f);
    fclose(f);
    CHECK(cli("preprocess --aipp rgb.cfg --to NCHW --raw %s %s", runs[i][0],
              runs[i][1]) == 2 &&
              said("is the input") && holds(runs[i][1], before, had),
          "OUT %s, an input of %s, refused and kept", runs[i][1], runs[i][0]);
  }
  mkdir("fifo", 0777);
  write_jpeg("fifo/a.jpg", W, H, 0, 2);
  CHECK(mkfifo("fifo/b.png", 0666) == 0 &&
            cli("preprocess --aipp rgb.cfg --to NCHW fifo o6.npy") == 1 &&
            said("fifo/b.png: not a regular file (a FIFO)"),
        "a FIFO named as an image in a directory is refused at once");
  CHECK(cli("preprocess --aipp rgb.cfg --to NCHW a.jpg fifo/b.png o6.npy") ==
                1 &&
            said("fifo/b.png: not a regular file (a FIFO)"),
        "a FIFO among images named one by one is refused at once");
}

int main(int argc, char **argv) {
  if (cli_setup(argc, argv, "images")) return 2;
  jpegs();
  pngs();
  batches();
  inputs_kept();
  cli_teardown();
  return check_summary();
}
