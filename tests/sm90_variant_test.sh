#!/usr/bin/env bash
# ctest tools.sm90-variant: tools/sm90-variant on a stand-in build folder (a build.ninja whose compile
# and link commands are scripts that record their arguments and write their outputs; real objects in
# the archive, so ar and ranlib run as they do on a build): the GEMM's file by default and
# --src FILE.cu, the variant's flags and sm_90a in the compile, the object replaced in the variant's
# library, both binaries linked against it; one-line refusals of bad arguments (exit 2), a file the
# build does not compile (exit 1, with its reason). No GPU, no nvcc; skipped (77) without ninja or cc.
tool=${1:?usage: sm90_variant_test.sh tools/sm90-variant}
. "$(dirname "$0")/tool_test_common.sh"
command -v ninja >/dev/null || { echo "skipped: no ninja"; exit 77; }
command -v cc >/dev/null || { echo "skipped: no cc"; exit 77; }
b=$d/build
mkdir -p "$b/bin" "$b/tests" "$d/path" "$b/CMakeFiles/nvfp4.dir/src/cuda/sm90"
echo 'int nvfp4_stand_in;' | cc -c -x c - -o "$d/real.o" || fail "cc could not make an object"
# The compiler: records its arguments, writes a real object where -o says.
cat >"$d/cc" <<'C'
#!/bin/sh
echo "$*" >> "$(dirname "$0")/cc.calls"
while [ $# -gt 0 ]; do [ "$1" = "-o" ] && cp "$(dirname "$0")/real.o" "$2"; shift; done
C
# The linker: records its arguments, writes the -o file.
cat >"$d/ld" <<'L'
#!/bin/sh
echo "$*" >> "$(dirname "$0")/ld.calls"
while [ $# -gt 0 ]; do [ "$1" = "-o" ] && echo linked > "$2"; shift; done
L
printf '#!/bin/sh\necho "listing of $4"\n' >"$d/path/cuobjdump"  # cuobjdump -sass -arch sm_90a FILE
chmod +x "$d/cc" "$d/ld" "$d/path/cuobjdump"
src=$d/repo/src/cuda/sm90
cat >"$b/build.ninja" <<N
rule cc
  command = $d/cc -gencode=arch=compute_90a,code=sm_90a -gencode=arch=compute_120a,code=sm_120a -MD -MT \$out -MF \$out.d -o \$out -c \$in
rule ar
  command = ar rc \$out \$in
rule link
  command = : && $d/ld main.o -o \$out libnvfp4.a -lm && :
build CMakeFiles/nvfp4.dir/src/cuda/sm90/sm90_gemm_nvfp4.cu.o: cc $src/sm90_gemm_nvfp4.cu
build CMakeFiles/nvfp4.dir/src/cuda/sm90/sm90_prep_a.cu.o: cc $src/sm90_prep_a.cu
build libnvfp4.a: ar CMakeFiles/nvfp4.dir/src/cuda/sm90/sm90_gemm_nvfp4.cu.o CMakeFiles/nvfp4.dir/src/cuda/sm90/sm90_prep_a.cu.o
build bin/nvfp4: link main.o | libnvfp4.a
build tests/nvfp4_tests: link main.o | libnvfp4.a
N
cp "$d/real.o" "$b/CMakeFiles/nvfp4.dir/src/cuda/sm90/sm90_gemm_nvfp4.cu.o"
cp "$d/real.o" "$b/CMakeFiles/nvfp4.dir/src/cuda/sm90/sm90_prep_a.cu.o"
(cd "$b" && ar rc libnvfp4.a CMakeFiles/nvfp4.dir/src/cuda/sm90/*.o) || fail "ar"
export PATH="$d/path:$PATH"

# The GEMM's file by default, with its flags after sm_90a alone.
"$tool" "$b" g -DNVFP4_X=1 >/dev/null || fail "the default variant: exit $?"
for f in nvfp4 nvfp4_tests sm90_gemm_nvfp4.o libnvfp4.a sass.txt; do [ -s "$b/variants/g/$f" ] || fail "variants/g/$f missing"; done
call=$(tail -1 "$d/cc.calls")
case $call in *"-o $b/variants/g/sm90_gemm_nvfp4.o -c $src/sm90_gemm_nvfp4.cu -gencode=arch=compute_90a,code=sm_90a -DNVFP4_X=1") ;;
  *) fail "default compile: '$call'" ;; esac
case $call in *sm_120a* | *" -MD "*) fail "the build's other gencodes or dependency flags kept: '$call'" ;; esac
ar t "$b/variants/g/libnvfp4.a" | grep -qx sm90_gemm_nvfp4.cu.o || fail "the GEMM's object not in the variant's library"
grep -q -- "main.o -o $b/variants/g/nvfp4_tests $b/variants/g/libnvfp4.a -lm" "$d/ld.calls" || fail "tests not linked against the variant's library"
grep -q "sm90_gemm_nvfp4.o" "$b/variants/g/sass.txt" || fail "sass.txt not of the variant's object"

# --src: the pre-pass's file.
"$tool" "$b" p --src sm90_prep_a.cu -DNVFP4_SM90_PREP_MANY=512 >/dev/null || fail "--src sm90_prep_a.cu: exit $?"
call=$(tail -1 "$d/cc.calls")
case $call in *"-o $b/variants/p/sm90_prep_a.o -c $src/sm90_prep_a.cu -gencode=arch=compute_90a,code=sm_90a -DNVFP4_SM90_PREP_MANY=512") ;;
  *) fail "--src compile: '$call'" ;; esac
[ -s "$b/variants/p/sm90_prep_a.o" ] && [ -s "$b/variants/p/nvfp4" ] || fail "variants/p incomplete"
[ -e "$b/variants/p/sm90_gemm_nvfp4.o" ] && fail "--src also compiled the GEMM"

# A file the build does not compile: exit 1 and why.
msg=$("$tool" "$b" n --src sm90_none.cu 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] || fail "a file the build lacks: exit $rc, expected 1"
[[ $msg == *"no compile command for sm90_none.cu"* ]] || fail "a file the build lacks: '$msg'"

expect_refusals "$tool" "" "$b" "$d/nobuild x" "$b a/b" "$b .x" "$b x --src" "$b x --src ../sm90_prep_a.cu" "$b x --src sm90_prep_a.c"
echo "sm90-variant: ok"
