// Busy-waits for `cycles` SM clock cycles: queued behind it, the kernels under test start
// back to back, so CUDA events between them measure GPU time without host launch gaps.
extern "C" __global__ void spin(long long cycles) {
    const long long start = clock64();
    while (clock64() - start < cycles) {
    }
}
