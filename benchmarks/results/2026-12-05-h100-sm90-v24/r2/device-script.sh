#!/bin/bash
# r2: the second command on the same warm H100 as r1 (the same carried binaries), verbatim:
B=build/carry; R=$OUT; timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 $B/epi2_tests --gtest_filter='Gpu.Sm90Bf16Output*' > $R/memcheck-epi2.txt 2>&1; echo "memcheck epi2 rc $? $(grep 'ERROR SUMMARY' $R/memcheck-epi2.txt)"; NVFP4_SM90_MAX_STAGES=4 timeout 120 $B/kept_tests --gtest_filter='Gpu.Sm90EveryKSplitConfigurationOnALongK' > $R/ks-longk-4stages.txt 2>&1; echo "ks longk 4 stages rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/ks-longk-4stages.txt)"
