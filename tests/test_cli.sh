#!/usr/bin/env bash
# test_cli.sh - the relayout command end to end: conversions, errors, files
# usage: test_cli.sh PATH/TO/relayout
. "$(dirname "$0")/checks.sh"

# The seed's example, there and back.
expect_ok "sample" "$R" sample s.npy
expect_ok "ND -> NZ" "$R" convert --from ND --to FRACTAL_NZ s.npy nz.npy
expect_ok "show" "$R" show --full nz.npy
has "NZ shape" "shape (2, 2, 16, 16) f16" out.txt
has "first row of the seed" "[[[[0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15]" out.txt
has "padded tail" "[16 17 18 19 20 21 22 23 24 25 26 27 0 0 0 0]" out.txt
# Past 1000 elements (this array has 1024), numpy's elision: 3 at each end.
expect_ok "show elides" "$R" show nz.npy
has "elided row" "[[[[0 1 2 ... 13 14 15]" out.txt
has "elided rows" "   ..." out.txt
[ "$(wc -l <out.txt)" = 29 ] && ok || bad "elided show has $(wc -l <out.txt) lines, not 1 + 4 x (6 rows + 1 ...)"
expect_ok "NZ -> ND" "$R" convert --from NZ --to ND --dims M=20,N=28 nz.npy back.npy
same "round trip" s.npy back.npy
expect_fail "padding hides M and N" 2 "does not show the extents of dims M, N (the padding of 'NZ' hides them): give them, e.g. --dims M=<n>,N=<n>" "$R" convert --from NZ --to ND nz.npy x.npy
absent "no output on failure" x.npy

# --c0 and --dtype.
expect_ok "c0=8" "$R" convert --from ND --to FRACTAL_NZ --c0 8 s.npy nz8.npy
"$R" show nz8.npy | head -1 >out.txt
has "c0=8 shape" "shape (4, 2, 16, 8)" out.txt
expect_fail "c0 on plain sides" 2 "no parameter 'c0'" "$R" convert --from ND --to NCHW --c0 8 s.npy x.npy
expect_ok "bf16 view of f16 bits" "$R" convert --from ND --to NZ --dtype bf16 s.npy nzb.npy
same "bits move unchanged" nz.npy nzb.npy
expect_fail "dtype width" 2 "holds 16-bit elements" "$R" convert --from ND --to NZ --dtype f32 s.npy x.npy

# Casts: f16 -> f32 -> f16 gives the bits back (widening is exact), the
# header names the new dtype, and a cast without a meaning is a command-line
# error.
expect_ok "to f32" "$R" convert --from ND --to FRACTAL_NZ --to-dtype f32 s.npy nz32.npy
"$R" show nz32.npy | head -1 >out.txt
has "f32 NZ shape (C0 of 32 bytes: 8)" "shape (4, 2, 16, 8) f32" out.txt
expect_ok "back to f16" "$R" convert --from NZ --to ND --dims M=20,N=28 --to-dtype f16 nz32.npy back16.npy
same "f16 -> f32 -> f16" s.npy back16.npy
expect_ok "quantize" "$R" convert --from ND --to ND --to-dtype i8 --scale 0.5 --zero-point -3 s.npy q.npy
"$R" show --full q.npy | head -2 >out.txt
has "i8 = round(x / 0.5) - 3" "[[-3 -1 1 3 5 7" out.txt
expect_fail "no such cast" 2 "no cast from f16 to i32" "$R" convert --from ND --to ND --to-dtype i32 s.npy x.npy
expect_fail "scale of a float" 2 "f16 takes no quantization" "$R" convert --from ND --to ND --to-dtype f16 --scale 2 s.npy x.npy
expect_fail "bad scale" 2 "--scale: 'inf' is not a positive finite number" "$R" convert --from ND --to ND --to-dtype i8 --scale inf s.npy x.npy
expect_fail "bad zero point" 2 "--zero-point: '1.5' is not a whole number" "$R" convert --from ND --to ND --to-dtype i8 --zero-point 1.5 s.npy x.npy
expect_fail "zero point range" 2 "zero point 300 is outside i8's range -128..127" "$R" convert --from ND --to ND --to-dtype i8 --zero-point 300 s.npy x.npy
expect_fail "unknown dtype" 2 "--to-dtype: unknown dtype 'f8'" "$R" convert --from ND --to ND --to-dtype f8 s.npy x.npy
absent "no output after a refused cast" x.npy

# A Fortran-order array is read by its logical shape.
LC_ALL=C sed "s/'fortran_order': False, 'shape': (20, 28)/'fortran_order': True , 'shape': (28, 20)/" s.npy >f.npy
expect_ok "fortran input" "$R" convert --from AB --to BA f.npy fc.npy
same "fortran transposed back" s.npy fc.npy

# Grammar, oneDNN tags and CuTe layouts.
expect_ok "transpose" "$R" convert --from MN --to NM s.npy t.npy
expect_ok "transpose back" "$R" convert --from NM --to MN t.npy tb.npy
same "transpose round trip" s.npy tb.npy
expect_ok "CuTe out" "$R" convert --from ND --to "((4,5),(4,7)):((4,112),(1,16))" s.npy cute.npy
expect_ok "CuTe in" "$R" convert --from "((4,5),(4,7)):((4,112),(1,16))" --to ND cute.npy cb.npy
same "CuTe round trip" s.npy cb.npy

# Bad input: clear errors, exit codes, nothing written.
expect_fail "unknown layout" 2 "unknown layout 'FRACTAL_QQ'" "$R" convert --from ND --to FRACTAL_QQ s.npy x.npy
expect_fail "letters" 2 "dim N of 'MN' has no place in 'MK' (its dims: MK)" "$R" convert --from MN --to MK s.npy x.npy
expect_fail "same file" 2 "OUT is the input file" "$R" convert --from ND --to ND s.npy s.npy
expect_fail "missing input" 1 "no.npy: cannot open" "$R" convert --from ND --to NZ no.npy x.npy
head -c 200 s.npy >short.npy
expect_fail "truncated input" 1 "short.npy: .npy file is truncated" "$R" convert --from ND --to NZ short.npy x.npy
printf 'hello world, not an array' >junk.npy
expect_fail "not npy" 1 "junk.npy: not a .npy file" "$R" convert --from ND --to NZ junk.npy x.npy
absent "nothing written" x.npy
expect_fail "no such dir" 1 "nodir/x.npy: cannot write into nodir: No such file or directory" "$R" convert --from ND --to NZ s.npy nodir/x.npy
expect_fail "bad dims text" 2 "expected LETTER=EXTENT" "$R" convert --from NZ --to ND --dims M20 nz.npy x.npy
expect_fail "zero dim" 2 "must be at least 1" "$R" convert --from NZ --to ND --dims M=0,N=28 nz.npy x.npy
expect_fail "huge dim" 2 "too large" "$R" convert --from NZ --to ND --dims M=99999999999999999999,N=28 nz.npy x.npy
expect_fail "wrong dims" 2 "has shape (2, 2, 16, 16), but 'NZ' at these dims has shape (2, 3, 16, 16)" "$R" convert --from NZ --to ND --dims M=40,N=28 nz.npy x.npy
expect_fail "unknown option" 2 "unknown option '--form'" "$R" convert --form ND --to NZ s.npy x.npy
expect_fail "missing args" 2 "needs --from, --to" "$R" convert --from ND s.npy
expect_fail "unknown command" 2 "unknown command 'convrt'" "$R" convrt
absent "still nothing written" x.npy
cp s.npy keep.npy
expect_fail "output over input is refused" 2 "OUT is the input file" "$R" convert --from ND --to NZ keep.npy ./keep.npy
same "input untouched" s.npy keep.npy

# Outputs that are not regular files, and standard input.
expect_ok "to standard output" "$R" convert --from ND --to NZ s.npy -
same "stdout got the array" nz.npy out.txt
"$R" convert --from ND --to NZ - piped.npy <s.npy 2>err.txt
same "from standard input" nz.npy piped.npy
"$R" convert --from ND --to NZ - - <s.npy >both.npy 2>err.txt
same "stdin to stdout" nz.npy both.npy
head -c 300 s.npy | "$R" convert --from ND --to NZ - x.npy >out.txt 2>err.txt
[ $? = 1 ] && grep -qF -- "-: .npy data is truncated: its shape needs 1120 bytes" err.txt && ok || bad "short stdin: $(cat err.txt)"
cat s.npy s.npy | "$R" convert --from ND --to NZ - x.npy >out.txt 2>err.txt
[ $? = 1 ] && grep -qF "runs on past its end" err.txt && ok || bad "long stdin: $(cat err.txt)"
(tail -c 1120 s.npy; tail -c 1120 s.npy) | "$R" convert --from ND --to NZ --shape 20x28 --dtype f16 - x.bin >out.txt 2>err.txt
[ $? = 1 ] && grep -qF "holds more than the 1120 bytes expected" err.txt && ok || bad "long raw stdin: $(cat err.txt)"
absent "nothing from bad stdin" x.npy
ln -s target.npy link.npy
expect_ok "through a symlink" "$R" convert --from ND --to NZ s.npy link.npy
same "the link's file" nz.npy target.npy
[ -L link.npy ] && ok || bad "the link stays a link"
ln -s sub/new.npy dangling.npy && mkdir sub
expect_ok "through a dangling symlink" "$R" convert --from ND --to NZ s.npy dangling.npy
same "the dangling link's file made" nz.npy sub/new.npy
[ -L dangling.npy ] && ok || bad "the dangling link stays a link"
mkfifo fifo
(cat fifo >fifo.npy &)
expect_ok "into a FIFO" "$R" convert --from ND --to NZ s.npy fifo
sleep 0.2
same "the FIFO's reader got it" nz.npy fifo.npy
[ -p fifo ] && ok || bad "the FIFO stays a FIFO"
head -c 200000 /dev/urandom >big.bin
(head -c 10 fifo >/dev/null &)
expect_fail "a reader that leaves" 1 "fifo: write failed: Broken pipe" "$R" convert --from ND --to NZ --shape 400x250 --dtype f16 big.bin fifo
python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX); s.bind("sock"); s.listen(1)
open("sock.ready", "w").close()
c, _ = s.accept(); data = b""
while True:
    b = c.recv(65536)
    if not b: break
    data += b
open("sock.npy", "wb").write(data)' &
while [ ! -e sock.ready ]; do sleep 0.05; done
expect_ok "into a socket" "$R" convert --from ND --to NZ s.npy sock
wait
same "the socket's listener got it" nz.npy sock.npy
[ -S sock ] && ok || bad "the socket stays a socket"
if [ "$(id -u)" = 0 ]; then
  mknod nulldev c 1 3
  expect_ok "into a device" "$R" convert --from ND --to NZ s.npy nulldev
  [ -c nulldev ] && [ "$(stat -c %t,%T nulldev)" = "1,3" ] && ok || bad "the device node stays"
fi
expect_fail "a stream that fails" 1 "/dev/full: write failed: No space left on device" "$R" convert --from ND --to NZ s.npy /dev/full
mkdir adir
expect_fail "a directory, before reading IN" 1 "adir: is a directory" "$R" convert --from ND --to NZ junk.npy adir
expect_fail "no directory, before reading IN" 1 "cannot write into nodir" "$R" convert --from ND --to NZ junk.npy nodir/x.npy
expect_ok "sample to stdout" "$R" sample -
same "sample on stdout" s.npy out.txt
# Temp files a killed run left: this output's a day old go, others stay.
touch -d '2 days ago' old.npy.tmp-AAAAAA other.npy.tmp-CCCCCC
touch old.npy.tmp-BBBBBB
mkdir -p old.npy.tmp-DDDDDD && touch old.npy.tmp-DDDDDD/x && touch -d '2 days ago' old.npy.tmp-DDDDDD
expect_ok "a run that writes there" "$R" convert --from ND --to NZ s.npy old.npy
[ ! -e old.npy.tmp-AAAAAA ] && [ ! -e old.npy.tmp-DDDDDD ] && ok || bad "a day-old temp file stays"
[ -e old.npy.tmp-BBBBBB ] && [ -e other.npy.tmp-CCCCCC ] && ok || bad "a new or another output's temp file went"
rm -f old.npy.tmp-BBBBBB other.npy.tmp-CCCCCC

# The command line's rough edges: one prefix, exit 2 for its mistakes.
expect_ok "version" "$R" --version
grep -qx "relayout [0-9]*\.[0-9]*\.[0-9]*" out.txt && ok || bad "version: $(cat out.txt)"
expect_fail "dims twice in explain" 2 "relayout explain: error: --dims: dim C is given twice" "$R" explain NC1HWC0 --dims N=1,C=3,H=1,W=1,C=4
expect_fail "dims twice in convert" 2 "relayout convert: error: --dims: dim M is given twice" "$R" convert --from NZ --to ND --dims M=20,N=28,M=3 nz.npy x.npy
expect_fail "a bad value names its command" 2 "relayout convert: error: --c0: 'x' is not a whole number" "$R" convert --from ND --to NZ --c0 x s.npy x.npy
RELAYOUT_DEVICE=bogus expect_fail "the device from the environment" 2 "relayout convert: error: RELAYOUT_DEVICE: no OpenCL device matches 'bogus'" "$R" convert --from ND --to NZ s.npy x.npy
expect_fail "misspelt FRACTALNZ" 2 "unknown layout 'FRACTALNZ'; did you mean FRACTAL_NZ?" "$R" convert --from ND --to FRACTALNZ s.npy x.npy
expect_fail "misspelt NC1HWZ" 2 "unknown layout 'NC1HWZ'; did you mean NC1HWC0?" "$R" explain NC1HWZ --dims N=1,C=3,H=1,W=1
expect_fail "a name that is no format" 2 "'MN' (dims MN) and 'BOGUS' (dims BOGUS) share no dim (text that names no format reads as grammar" "$R" convert --from MN --to BOGUS s.npy x.npy
expect_fail "a CuTe extent mismatch" 2 "dim d0 is 16 in '((4,4),(4,7)):((4,112),(1,16))' but 20 in the source array" "$R" convert --from ND --to "((4,4),(4,7)):((4,112),(1,16))" s.npy x.npy

# explain.
expect_ok "explain" "$R" explain NCHW16c --dims N=2,C=17,H=5,W=3 --dtype f16
has "explain padding" "C: 17 -> 32" out.txt
has "explain size" "1920 bytes" out.txt
has "explain shape" "(2, 2, 5, 3, 16)" out.txt
expect_ok "explain NZ by shape" "$R" explain FRACTAL_NZ --shape 20x28 --dtype f16
has "explain NZ array" "(2, 2, 16, 16)" out.txt
# CANN's NC1HWC0_C04 (aclFormat 12): (N, ceil(C / 4), H, W, 4)
expect_ok "explain NC1HWC0_C04" "$R" explain NC1HWC0_C04 --dims N=2,C=3,H=5,W=7
has "NC1HWC0_C04's shape" "array     (2, 1, 5, 7, 4)" out.txt
expect_ok "explain BSH" "$R" explain "BSH(heads=4)" --dims B=2,S=5,N=4,D=6
has "BSH's array holds H = N * D" "array     (2, 5, 24)" out.txt
expect_ok "explain TPU" "$R" explain "TPU_ALIGNED(npus=4,start=2,lmem=1024)" --dims N=2,C=3,H=4,W=5
has "explain TPU N stride" "N                   2             64" out.txt
expect_ok "explain ZN" "$R" explain FRACTAL_ZN --shape 40x20 --dtype i8
has "ZN's array at int8" "array     (2, 2, 16, 32)" out.txt
has "ZN's note" "K0 = 32, N0 = 16 (before 0.2" out.txt
expect_ok "explain a oneDNN tag" "$R" explain acdb --shape 2x3x4x5
has "the tag's dims by the alphabet" "dims      A=2 B=3 C=4 D=5" out.txt
has "the tag's note" "a oneDNN tag" out.txt
expect_ok "explain FRACTAL_Z" "$R" explain FRACTAL_Z --dims N=4,C=3,H=2,W=2 --dtype f16
has "CANN's shape" "array     (4, 1, 16, 16)  (axes merged as the format stores them: FRACTAL_Z's leading ones" out.txt
expect_ok "formats" "$R" formats
has "ZN in formats" "FRACTAL_ZN     ZN,nZ       ...KN   c0 b16                 ...KN16n64k       ...KN16n32k       ...KN16n16k       ...KN16n8k" out.txt
has "NZ's grammar states its dims" "FRACTAL_NZ     NZ,zN       ...MN   c0 b16                 MN:...NM16m64n    MN:...NM16m32n    MN:...NM16m16n    MN:...NM16m8n" out.txt
has "CATLASS's nN" "nN             -           ...MN   c0 b16                 MN:...NM16n64m" out.txt
has "aclFormat 12" "  12  NC1HWC0(c0=4)" out.txt
expect_fail "a lowercase letter outside oneDNN's convention" 2 "'N' in 'xN': with lowercase letters" "$R" explain xN --shape 3x4
expect_fail "stated dims that are not the layout's" 2 "states its dims as MK but lays out NM" "$R" explain 'MK:NM16m' --shape 3x4
head -c 480 /dev/urandom >r4.bin
expect_ok "ND -> acdb" "$R" convert --from ND --to acdb --shape 2x3x4x5 --dtype f32 r4.bin tag.bin
expect_ok "NCHW -> NHWC" "$R" convert --from NCHW --to NHWC --shape 2x3x4x5 --dtype f32 r4.bin nhwc.bin
same "acdb over abcd is NHWC over NCHW" tag.bin nhwc.bin
expect_fail "explain missing dim" 2 "--dims lacks W" "$R" explain NCHW --dims N=1,C=2,H=3
expect_fail "explain ND needs shape" 2 "give --shape" "$R" explain ND --dims N=1
expect_fail "explain bad shape" 2 "expected AxBxC" "$R" explain ND --shape 2xx3

# Devices: the OpenCL path gives the reference's bytes.
expect_ok "devices" "$R" devices
has "devices marks auto" "* 0" out.txt
has "devices lists ref" "ref  the scalar reference" out.txt
# PoCL's workers pinned one to a CPU, unless the caller chose or cannot.
online=$(getconf _NPROCESSORS_ONLN)
expect_ok "pin as asked" env POCL_AFFINITY=0 "$R" devices
has "pin left to the caller" "as POCL_AFFINITY=0, set before" out.txt
expect_ok "more threads" env -u POCL_AFFINITY POCL_MAX_PTHREAD_COUNT=$((online + 1)) "$R" devices
has "no pin past the CPUs" "threads: not pinned" out.txt
if [ "$(nproc)" = "$online" ]; then
  expect_ok "pin" env -u POCL_AFFINITY "$R" devices
  has "pinned" "threads: pinned, worker i to CPU i" out.txt
fi
if [ "$online" -gt 1 ] && taskset -c $((online - 1)) true 2>/dev/null; then
  expect_ok "part of the CPUs" env -u POCL_AFFINITY taskset -c $((online - 1)) "$R" devices
  has "no pin on part of the CPUs" "threads: not pinned" out.txt
fi
expect_ok "convert on cpu" "$R" convert --device cpu --from AB --to BA4a f.npy dev.npy
expect_ok "convert on ref" "$R" convert --device ref --from AB --to BA4a f.npy ref.npy
same "device equals reference" dev.npy ref.npy
expect_ok "convert on the generic kernel" env RELAYOUT_KERNELS=generic "$R" convert --device cpu --from AB --to BA4a f.npy gen.npy
same "generic equals reference" gen.npy ref.npy
expect_ok "convert waiting for its own kernel" "$R" convert --device cpu --wait-compile --from AB --to BA4a f.npy wait.npy
same "its own kernel equals reference" wait.npy ref.npy
RELAYOUT_DEVICE=ref expect_ok "RELAYOUT_DEVICE" "$R" convert --from ND --to NZ s.npy env.npy
same "env device" nz.npy env.npy
expect_fail "unknown device" 2 "no OpenCL device matches 'quantum'" "$R" convert --device quantum --from ND --to NZ s.npy x.npy
expect_fail "device index" 2 "device 7 does not exist" "$R" convert --device 7 --from ND --to NZ s.npy x.npy

# bench: figures for the conversion and the copy peers.
expect_ok "bench" "$R" bench --device cpu --from NCHW --to NHWC --shape 2x16x8x8 --runs 3
has "bench copy kernel" "copy (kernel)" out.txt
has "bench ratio" "of the copy kernel" out.txt
has "bench first run" "first run " out.txt
has "bench own kernel ready" "own kernel      ready" out.txt
grep -q "^NCHW -> NHWC.*(lines kernel)$" out.txt && ok || bad "bench's heading names its own kernel's family: $(head -1 out.txt)"
has "bench generic kernel" "of its own kernel's)" out.txt
has "bench host path in place" "(relayout_plan_run: in place)" out.txt
has "bench checks both results" "= reference     yes, every result" out.txt
expect_ok "bench, no generic kernel" "$R" bench --device cpu --from NCHW --to NHWC --shape 2x16x4x4 --dtype i8 --to-dtype i4 --scale 1 --runs 1
has "bench says why no generic kernel" "generic kernel  none: using the scalar reference: a cast to or from a 4-bit type has no generic kernel" out.txt
expect_ok "bench on the generic kernels" env RELAYOUT_KERNELS=generic "$R" bench --device cpu --from NCHW --to NHWC --shape 2x16x8x8 --runs 2
grep -q "^NCHW -> NHWC.*(generic kernel)$" out.txt && ok || bad "bench's heading names the generic kernel: $(head -1 out.txt)"
has "bench says no own kernel was built" "own kernel      not built: every run above is the generic kernel's" out.txt
expect_ok "bench json on the generic kernels" env RELAYOUT_KERNELS=generic "$R" bench --device cpu --from NCHW --to NHWC --shape 2x16x8x8 --runs 2 --json
has "bench json names the generic kernel" '"kernel": "generic"' out.txt
has "bench json: no own kernel ready" '"specialised_ready_ms": null' out.txt
RELAYOUT_KERNELS=generic expect_fail "bench on the reference" 1 "nothing to time on" "$R" bench --device cpu --from NCHW --to NHWC --shape 2x16x4x4 --dtype i8 --to-dtype i4 --scale 1 --runs 1
RELAYOUT_UNIFIED=0 expect_ok "bench through copies" "$R" bench --device cpu --from NCHW --to NHWC --shape 2x16x8x8 --runs 3
has "bench host path copies" "(relayout_plan_run: upload, run, download)" out.txt
has "bench through copies checks both results" "= reference     yes, every result" out.txt
expect_ok "bench json on a device" "$R" bench --device cpu --from ND --to FRACTAL_NZ --shape 40x70 --dtype f16 --runs 2 --json
has "bench json checks the result" '"same_as_reference": true' out.txt
expect_ok "bench json" "$R" bench --device ref --from ND --to FRACTAL_NZ --shape 40x70 --dtype f16 --runs 2 --json
has "bench json ratio" '"ratio_copy_kernel": ' out.txt
has "bench json family" '"family": "reference"' out.txt
has "bench json host path" '"host_gbps": ' out.txt
expect_fail "bench, a list with an empty item" 2 "--device 0,,1: an empty item" "$R" bench --device 0,,1 --from ND --to FRACTAL_NZ --shape 40x70 --runs 2
POCL_DEVICES="pthread pthread" expect_ok "bench on each device" "$R" bench --device 0,1,ref --from ND --to FRACTAL_NZ --shape 40x70 --dtype f16 --runs 2 --json
[ "$(grep -c '"same_as_reference": true' out.txt)" = 2 ] && [ "$(grep -c '"family": "reference"' out.txt)" = 1 ] && ok || bad "a JSON object per device: $(cat out.txt)"
expect_fail "bench shape" 2 "has dims NCHW, but 3 extents were given" "$R" bench --from NCHW --to NHWC --shape 2x3x4
expect_fail "bench runs" 2 "--runs takes 1 to 1000" "$R" bench --from NCHW --to NHWC --shape 2x3x4x5 --runs 0

# Raw files (--shape, --dtype) and torch_npu acl_format numbers (2 ND,
# 29 FRACTAL_NZ): the same bytes as the .npy conversion above.
tail -c 1120 s.npy >s.bin
tail -c 2048 nz.npy >nz-data.bin
expect_ok "raw ND -> NZ by number" "$R" convert --from 2 --to 29 --shape 20x28 --dtype f16 s.bin nz.bin
same "raw NZ" nz-data.bin nz.bin
expect_ok "raw NZ -> ND" "$R" convert --from FRACTAL_NZ --to ND --shape 2x2x16x16 --dtype f16 --dims M=20,N=28 nz.bin back.bin
same "raw round trip" s.bin back.bin
expect_fail "raw size" 1 "s.bin holds 1120 bytes; --shape 20x29 of f16 needs 1160" "$R" convert --from ND --to NZ --shape 20x29 --dtype f16 s.bin x.bin
absent "no raw output on failure" x.bin
expect_fail "raw dtype" 2 "--shape needs --dtype" "$R" convert --from ND --to NZ --shape 20x28 s.bin x.bin
expect_fail "acl number" 2 "unknown acl_format number 5" "$R" convert --from 5 --to NZ --shape 20x28 --dtype f16 s.bin x.bin

# Names from files reach the terminal escaped; each mistake is one line;
# no OpenCL driver at all is the machine's failure (exit 1), not a usage one.
python3 - <<'PY'
import json, struct
name = "w\x1b[31mred\x07"
h = json.dumps({name: {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})
open("esc.st", "wb").write(struct.pack("<Q", len(h)) + h.encode() + bytes(8))
PY
expect_ok "show a tensor named with escape codes" "$R" show esc.st
has "shown escaped" 'w\x1b[31mred\x07  F32' out.txt
! grep -q $'\x1b' out.txt && ok || bad "no escape byte reaches the terminal"
expect_fail "a repack error naming it" 2 'w\x1b[31mred\x07' "$R" repack esc.st x.st --rule '*=FRACTAL_Z'
! grep -q $'\x1b' err.txt && ok || bad "no escape byte in the error"
expect_fail "verify --report 0" 2 "--report: 0 must be at least 1" "$R" verify --from ND --to ND --report 0 s.bin s.bin
[ "$(wc -l <err.txt)" = 1 ] && ok || bad "one error line: $(cat err.txt)"
expect_fail "no OpenCL driver" 1 "no OpenCL device found for 'cpu'" env OCL_ICD_VENDORS=/nonexistent "$R" convert --device cpu --from ND --to NZ --shape 20x28 --dtype f16 s.bin x.bin
head -c 96 s.bin > frames.raw
expect_fail "a batch past 64 bits" 2 "does not fit in 64 bits" sh -c "cat frames.raw | '$R' preprocess --input-format RGB888_U8 --size 4x2 --to NCHW --raw --batch 4611686018427387904 - -"

# Every subcommand explains itself.
for c in bench convert devices explain formats repack sample show; do
  expect_ok "$c --help" "$R" "$c" --help
  has "$c usage" "usage: relayout $c" out.txt
done

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
