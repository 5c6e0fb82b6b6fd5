#!/usr/bin/env bash
# test_cuda while another process (test_dfa_cuda) keeps the same GPU busy:
# a busy GPU delays work queued on the legacy stream, which the runner's
# non-blocking streams do not wait for (this once zeroed a slot's first
# batch after its text had landed: counts lost in about one count run in
# twenty). Skipped (77) without a GPU, as test_cuda is.
# usage: shared_gpu.sh TEST_CUDA TEST_DFA_CUDA
test_cuda=${1:?usage: shared_gpu.sh TEST_CUDA TEST_DFA_CUDA}
test_dfa_cuda=${2:?}
"$test_dfa_cuda" >/dev/null 2>&1 &
other=$!
"$test_cuda"
status=$?
wait "$other"
other_status=$?
if [ "$other_status" -ne 0 ] && [ "$other_status" -ne 77 ]; then
    echo "FAIL: test_dfa_cuda beside test_cuda exited $other_status"
    [ "$status" -eq 0 ] && status=1
fi
exit "$status"
